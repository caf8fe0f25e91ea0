#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs tca_team_survivors under mpirun --enable-recovery, which exits 0 whatever its ranks
# return: passes when SURVIVORS ranks printed "finished" and none printed "FAILED".
# Usage: run_mpirun_survivors.sh SURVIVORS MPIRUN [ARGS...]
set -u
survivors=$1
shift
output=$("$@" 2>&1)
status=$?
echo "$output" | grep -v 'Read -1, expected'
finished=$(grep -c '^survivor [0-9]*: finished' <<<"$output")
if [[ $status -ne 0 ]] || grep -q ': FAILED' <<<"$output" || [[ $finished -ne $survivors ]]; then
  echo "FAIL: mpirun exited with $status; $finished of $survivors survivors finished"
  exit 1
fi
echo "PASS: $finished survivors finished"
