#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs one deliberately hung 4-rank job (hang.cc) under tca-run with dumps on timeout and on
# SIGUSR1 into a folder, then checks that tca-report --hang names the right ranks and slots.
# Usage: run_hang.sh MODE TCA_RUN HANG_PROGRAM TCA_REPORT
set -u
mode=$1 tca_run=$2 program=$3 report=$4
dir=$(mktemp -d /tmp/tca-hang-XXXXXX)
trap 'rm -rf "$dir"' EXIT

TCA_TIMEOUT_MS=1000 TCA_DUMP_ON_TIMEOUT=1 TCA_DUMP_SIGNAL=USR1 TCA_DUMP_FILE="$dir" \
  "$tca_run" -n 4 "$program" "$mode"
status=$?
if [[ $status -ne 0 ]]; then
  echo "FAIL: the hung job ($mode) ended with status $status"
  exit 1
fi
ls "$dir"
diagnosis=$(python3 "$report" --hang "$dir") || { echo "FAIL: tca-report --hang failed"; exit 1; }
echo "$diagnosis"

expect() {  # the diagnosis must hold this line (fixed string)
  if ! grep -qF -- "$1" <<<"$diagnosis"; then
    echo "FAIL: the diagnosis does not say: $1"
    exit 1
  fi
}
case $mode in
  missing_notify)
    expect "rank 3 waits for slot 5 from rank 1"
    expect "rank 1 never raised slot 5 of rank 3 (sent 0, rank 3 consumed 0)"
    expect "rank 1 is not waiting in tca" ;;
  wrong_slot)
    expect "rank 3 waits for slot 5 from rank 1"
    expect "rank 1 raised slot 6 of rank 3 instead (1 not consumed there)" ;;
  skipped_coll)
    expect "rank 2 never entered collective #1 (allreduce) that ranks 0, 1, 3 are in" ;;
  dead_peer)
    expect "rank 2 is dead (seen by rank 0)"
    expect "rank 0 waits for slot 1 from rank 2, which is dead"
    expect "no dump from ranks 1, 2, 3" ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
echo "PASS: $mode"
