#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Finds or installs what the build needs (scripts/common.sh), builds tca in build/, runs the
# ping-pong benchmark on 2 ranks (every path present: CPU, and GPU where CUDA and GPUs exist) and
# the collectives (on GPU memory with one rank per GPU where CUDA and GPUs exist, else on 4 ranks
# in host memory), and leaves in results/<UTC date and time>/ their JSON, their tables and the
# figures tca-report draws of them (report/report.md shows every figure with its caption).
# Arguments go to tca-pingpong (e.g. scripts/run.sh -p shm.chain -e 1M, scripts/run.sh --help).
# TCA_BUILD_DIR names another build directory than build/.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_dir="${TCA_BUILD_DIR:-build}"
pingpong_args=()
for argument in "$@"; do
  [[ "$argument" == "--json" ]] || pingpong_args+=("$argument")  # the JSON is always written
done

ensure_prerequisites run
configure "$build_dir" -DTCA_BUILD_BENCH=ON
build "$build_dir" tca-pingpong tca-coll
bin="$REPO_ROOT/$build_dir/bench"

for argument in "$@"; do
  if [[ "$argument" == "-h" || "$argument" == "--help" ]]; then
    exec "$MPIRUN" "${MPIRUN_FLAGS[@]}" -n 2 "$bin/tca-pingpong" --help
  fi
done

results="$REPO_ROOT/results/$(date -u +%Y-%m-%dT%H%M%SZ)"
mkdir -p "$results"

# measure NAME MPIRUN_ARGS... -- PROGRAM ARGS...: the table on the terminal and in NAME.txt,
# the JSON in NAME.json.
measure() {
  local name=$1
  shift
  echo "== mpirun $*" | tee "$results/$name.txt"
  "$MPIRUN" "${MPIRUN_FLAGS[@]}" "$@" --json >"$results/$name.json" 2> >(tee -a "$results/$name.txt" >&2)
}

# Two ranks on one GPU take turns on it: each GPU round trip costs a time slice (100 us or more),
# so the latency-bound sizes get fewer iterations per batch unless the caller chose them.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [[ "$gpus" -eq 1 && -n "$(cuda_compiler_args)" && " ${pingpong_args[*]} " != *" -i "* &&
      " ${pingpong_args[*]} " != *" --iters"* ]]; then
  note "one GPU for both ranks: tca-pingpong -i 20 -r 3 (20 round trips per batch, 3 batches)"
  pingpong_args+=(-i 20 -r 3)
  if [[ " ${pingpong_args[*]} " != *" -e "* && " ${pingpong_args[*]} " != *" --max-bytes"* ]]; then
    note "one GPU for both ranks: sizes up to 4 MiB (-e 4M; a round trip costs a time slice)"
    pingpong_args+=(-e 4M)
  fi
fi
measure pingpong -n 2 "$bin/tca-pingpong" "${pingpong_args[@]}"

coll_ranks=4
coll_args=(-b 8 -e 1M -f 4 -c 1)
coll_env=()
if [[ "$gpus" -gt 0 && -n "$(cuda_compiler_args)" ]]; then
  coll_ranks=$gpus
  # A full check of fresh data in every iteration costs a host round trip per iteration on GPU
  # memory: one check after the timed batches, as the benchmark does by default.
  coll_args=(-b 8 -e 1M -f 4 -r 3 --memory gpu)
  export NCCL_NVLS_ENABLE=0  # NCCL's reference rows: never NVLink multicast
  coll_env=(-x NCCL_NVLS_ENABLE)
fi
measure coll "${coll_env[@]}" -n "$coll_ranks" "$bin/tca-coll" "${coll_args[@]}"

if python_has matplotlib && python_has numpy; then
  "$REPO_ROOT/tools/report/tca-report" "$results/pingpong.json" "$results/coll.json" \
    --out "$results/report" --title "tca: ping-pong and collectives"
  echo "== results in ${results#"$REPO_ROOT"/}: pingpong.json, coll.json (the JSON), pingpong.txt, coll.txt (the tables), report/report.md (the figures with their captions)"
else
  echo "== results in ${results#"$REPO_ROOT"/}: pingpong.json, coll.json (the JSON), pingpong.txt, coll.txt (the tables)"
  echo "== no figures: python3 lacks matplotlib. Install it (python3 -m pip install matplotlib), then:"
  echo "   tools/report/tca-report ${results#"$REPO_ROOT"/}/*.json --out ${results#"$REPO_ROOT"/}/report"
fi
