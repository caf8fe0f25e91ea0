#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs a job in which one rank SIGKILLs itself (tca_killed_rank) and checks the aftermath:
#  - the launcher returns within a bound (no survivor hangs);
#  - every survivor reported TCA_ERROR_PEER_FAILED or TCA_ERROR_TIMEOUT, or, in mode
#    "launcher", the launcher ended the job itself;
#  - where the command ends in "finalize", every survivor that reported also came back from
#    tcaFinalize;
#  - the run left nothing of tca in /dev/shm (tca uses memfds); anything else it left there
#    is reported (that is the MPI library's).
#
# Usage: run_killed_rank.sh MODE RANKS COMMAND...
#   MODE      "recovery": the launcher lets survivors run on (mpirun --enable-recovery), so
#             each must report its error itself; "launcher": mpirun's default, which may end
#             the survivors before they notice.
#   RANKS     ranks in the job; the last one is the victim.
#   COMMAND   the whole launch command line.
# KILLED_RANK_BOUND_S (default 30) bounds the run.
set -u

mode=$1
ranks=$2
shift 2
bound=${KILLED_RANK_BOUND_S:-30}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

finalize=0
if [ "${!#}" = finalize ]; then finalize=1; fi

shm_before=$(ls -A /dev/shm | sort)
start=$(date +%s)
timeout --kill-after=10 "$bound" "$@" >"$log" 2>&1
status=$?
elapsed=$(( $(date +%s) - start ))
shm_after=$(ls -A /dev/shm | sort)

echo "---- job output (exit status $status after ${elapsed} s) ----"
cat "$log"
echo "---- checks ----"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# timeout(1) exits 124, or 137 when it had to SIGKILL; mpirun itself also exits 137 when it
# passes on the victim's SIGKILL, so 137 counts as a timeout only when the bound was reached.
if [ "$status" -eq 124 ] || { [ "$status" -eq 137 ] && [ "$elapsed" -ge "$bound" ]; }; then
  fail "the job did not finish within ${bound} s"
fi
# A report may begin mid-line: the launcher passes on a rank's stdout and stderr as they come,
# and a thread left inside MPI may be printing Open MPI's retry message on stderr meanwhile
# (each report is one write, so it stays whole up to its newline).
if ! grep -q "victim $((ranks - 1)): killing itself" "$log"; then
  fail "the victim never reached its kill point"
fi

launcher_ended_job=0
if grep -q "exited on signal 9" "$log"; then launcher_ended_job=1; fi
# A survivor leaves without finalizing MPI once it has reported; Open MPI's launcher then ends
# the job ("... exiting improperly"), possibly before a slower survivor noticed the death.
if grep -q "exiting improperly" "$log"; then launcher_ended_job=1; fi
# UCX 1.22 over TCP may abort a survivor that is the target of the dead rank's put, inside UCX
# ("Fatal: unexpected error: Endpoint timeout", docs/UCX.md); the launcher then ends the job.
if grep -q "Fatal: unexpected error: Endpoint timeout" "$log" &&
   grep -q "exited on signal 6" "$log"; then
  echo "note: UCX aborted a survivor (Endpoint timeout), and the launcher ended the job"
  launcher_ended_job=1
fi

for ((rank = 0; rank < ranks - 1; rank++)); do
  line=$(grep -o "survivor $rank: .*" "$log" | grep -v ": tcaFinalize returned" | head -n 1)
  if [ -z "$line" ]; then
    if [ "$mode" = launcher ] && [ "$launcher_ended_job" -eq 1 ]; then
      echo "ok: survivor $rank was ended by the launcher"
    else
      fail "survivor $rank reported nothing"
    fi
  elif echo "$line" | grep -Eq "returned (TCA_ERROR_PEER_FAILED|TCA_ERROR_TIMEOUT) "; then
    echo "ok: $line"
    if [ "$finalize" -eq 1 ]; then
      finalized=$(grep -o "survivor $rank: tcaFinalize returned.*" "$log" | head -n 1)
      if [ -n "$finalized" ]; then echo "ok: $finalized"; else fail "survivor $rank never came back from tcaFinalize"; fi
    fi
  else
    fail "survivor $rank did not report PEER_FAILED or TIMEOUT: $line"
  fi
done

new_in_shm=$(comm -13 <(echo "$shm_before") <(echo "$shm_after") | sed '/^$/d')
if [ -n "$new_in_shm" ]; then
  while read -r name; do
    case "$name" in
      *tca*) fail "tca left /dev/shm/$name" ;;
      *) echo "note: /dev/shm/$name appeared during the run (not tca's: MPI's or another job's)" ;;
    esac
  done <<<"$new_in_shm"
else
  echo "ok: nothing new in /dev/shm"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
