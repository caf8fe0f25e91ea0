#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs tca_team_survivors on the ucx transport under tca-run. UCX 1.22 may abort a survivor
# inside its own put handler when the dead rank's connection fails under it
# ("ucp_request.inl:356 Fatal: unexpected error: Endpoint timeout"; docs/UCX.md): a run that
# ended that way is run again, up to 3 times, and skipped (77) when every run did.
# Usage: run_ucx_survivors.sh TCA_RUN PROGRAM DEATHS
set -u
tca_run=$1 program=$2 deaths=$3
for attempt in 1 2 3; do
  output=$("$tca_run" -n 4 "$program" ucx "$deaths" 2>&1)
  status=$?
  echo "$output"
  [[ $status -eq 0 ]] && exit 0
  if ! grep -q 'Fatal: unexpected error: Endpoint timeout' <<<"$output"; then
    echo "FAIL: the survivors' job ended with status $status"
    exit 1
  fi
  echo "note: attempt $attempt ended in UCX's own abort on the dead rank's connection; again"
done
exit 77
