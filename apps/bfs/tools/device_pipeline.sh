#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Pipelined levels (directions chosen on the GPU, TCA_BFS_AHEAD=1 or 2) against levels chosen by
# the host (TCA_BFS_AHEAD=0), same binary and machine, on a machine of 4 GPUs (device kind
# nvidia-h100-x4 or nvidia-h200-x4), from binaries staged by apps/bfs/tools/stage.sh into
# .devbin-bfs/. Logs in $OUT/bfs-pipeline.tgz, the comparison rows in $OUT/summary.txt.
# Usage: apps/bfs/tools/device_pipeline.sh [BUDGET_SECONDS] (default 450: a step that could end
# past that many seconds is skipped).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_MCA_btl_vader_single_copy_mechanism=cma
export TCA_CUDA_PATH=ce  # tca-bfs makes no TCA_PATH_CUDA chains: no calibration at tcaInit
BUDGET=${1:-450}
OUT=${OUT:-/tmp/bfs-out}
LOGS="$OUT/bfs-pipeline"
mkdir -p "$LOGS"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
BIN="$PWD/.devbin-bfs"
export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
if ! ldconfig -p | grep -q 'libnccl.so.2 '; then
  wheels=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
  [[ -n "$wheels" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$wheels/nccl/lib"
fi
BFS="$BIN/bin/tca-bfs"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi topo -m
  nproc
  mpirun --version | head -1
  ldd "$BFS" | grep "not found"
} > "$LOGS/machine.txt" 2>&1
head -3 "$LOGS/machine.txt" | tee -a "$SUMMARY"
GPUS=$(nvidia-smi -L | grep -c "^GPU")
P=$(( GPUS < 4 ? GPUS : 4 ))  # ranks of the several-GPU runs, one GPU each
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH
        -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS
        -x OMPI_MCA_btl_vader_single_copy_mechanism -x TCA_CUDA_PATH -x TCA_BFS_AHEAD)

# run NAME AHEAD RANKS LIMIT ARGS...: one tca-bfs run, its log in NAME.log, its rows in the summary.
run() {
  local name=${1/npP/np$P} ahead=$2 ranks=$3 limit=$4
  shift 4
  if (( SECONDS + limit > BUDGET )); then
    echo "== $name: skipped (${SECONDS} s used)" | tee -a "$SUMMARY"
    return
  fi
  (( ranks > GPUS )) && { echo "== $name: skipped ($GPUS GPUs)" | tee -a "$SUMMARY"; return; }
  if (( ahead > 0 && PIPELINE_BROKEN )); then
    echo "== $name: skipped (the pipelined check failed)" | tee -a "$SUMMARY"
    return
  fi
  local begin=$SECONDS
  echo "# TCA_BFS_AHEAD=$ahead mpirun -n $ranks tca-bfs $*" > "$LOGS/$name.log"
  TCA_BFS_AHEAD=$ahead timeout "$limit" "${MPIRUN[@]}" -n "$ranks" "$BFS" "$@" >> "$LOGS/$name.log" 2>&1
  local rc=$?
  LAST_RC=$rc
  {
    echo "== $name: TCA_BFS_AHEAD=$ahead mpirun -n $ranks tca-bfs $* -> rc=$rc, $((SECONDS - begin)) s"
    grep -E "^(tca|nccl|mpi) +[0-9]" "$LOGS/$name.log"
    grep -E "WRONG|skipped|rror|failed|construction_time" "$LOGS/$name.log" | head -5
  } | tee -a "$SUMMARY"
}

G=(--device gpu)
PIPELINE_BROKEN=0
LAST_RC=0
run s14_npP_check 1 $P 45 "${G[@]}" --scale 14 --comm tca --comm nccl
(( LAST_RC != 0 )) && PIPELINE_BROKEN=1
run s12_npP_td 2 $P 40 "${G[@]}" --scale 12 --nbfs 16 --direction top-down --comm tca
run s12_npP_bu 1 $P 40 "${G[@]}" --scale 12 --nbfs 16 --direction bottom-up --comm tca --comm nccl
run s24_npP_before 0 $P 100 "${G[@]}" --scale 24 --comm tca --comm nccl
run s24_npP_after 1 $P 100 "${G[@]}" --scale 24 --comm tca --comm nccl --levels
run s24_np1_before 0 1 80 "${G[@]}" --scale 24 --comm tca
run s24_np1_after 1 1 80 "${G[@]}" --scale 24 --comm tca
if (( SECONDS + 60 < BUDGET )); then
  begin=$SECONDS
  TCA_BFS_AHEAD=1 timeout 60 "${MPIRUN[@]}" -n $P "$BIN/bin/tca_bfs_tests" > "$LOGS/tests_npP.log" 2>&1
  echo "== tca_bfs_tests np$P: rc=$? $((SECONDS - begin)) s $(grep -aE '(PASSED|FAILED) +\]' "$LOGS/tests_npP.log" | sed 's/\x1b\[[0-9;]*m//g' | sort -u | tr '\n' ' ')" | tee -a "$SUMMARY"
  grep -a "Failure\|FAILED  \]" "$LOGS/tests_npP.log" | head -8 | tee -a "$SUMMARY"
fi
run s26_npP_after 1 $P 150 "${G[@]}" --scale 26 --comm tca --comm nccl
run s26_npP_before 0 $P 150 "${G[@]}" --scale 26 --comm tca --comm nccl
run s24_npP_ahead2 2 $P 70 "${G[@]}" --scale 24 --comm tca --comm nccl
(cd "$OUT" && tar -czf bfs-pipeline.tgz bfs-pipeline && rm -rf bfs-pipeline)
echo "total ${SECONDS} s" | tee -a "$SUMMARY"
