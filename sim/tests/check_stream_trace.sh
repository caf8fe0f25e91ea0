#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# A trace of stream-ordered GPU collective iterations (tests/cuda: coll_gpu_traced_np2) read by
# tca-sim: every GPU-timed iteration of the ranks' files is replayed as one (the reader rejects
# an end before its begin). Exit 77 (skipped) where the trace holds none (no GPU ran them).
# Usage: check_stream_trace.sh TCA_SIM TRACE_DIR FABRIC
sim=$1 dir=$2 fabric=$3
written=$(cat "$dir"/rank-*.trace 2>/dev/null | grep -c 'coll_begin .*timed=gpu')
if [ "$written" -eq 0 ]; then
  echo "no GPU-timed iteration in $dir (no GPU ran the stream-ordered cases): skipped"
  exit 77
fi
json=$("$sim" replay --trace "$dir" --fabric "$fabric" --json) || exit 1
replayed=$(printf '%s\n' "$json" | sed -n 's/^ *"gpu_timed": \([0-9]*\),*$/\1/p')
echo "$written GPU-timed iterations in the trace, $replayed replayed"
[ "$replayed" = "$written" ]
