#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# tca-bfs on the GPU machine (device tool, kind nvidia-h200), from binaries staged by
# apps/bfs/tools/stage.sh and carried in .devbin-bfs/. Logs go to $OUT.
# Usage: apps/bfs/tools/device_run.sh STEP... with steps:
#   check      GPU ranks at scales 10-16, every --comm, every direction, 1-3 ranks on the GPU
#   sanitize   one small run under compute-sanitizer --tool memcheck
#   lanes      scale 24, 16 searches with each bottom-up lane count
#   perf       scale 20, 22, 24: 64 searches, every one validated, --comm tca, mpi and nccl
#   eager      scale 24 with every level launched call by call (TCA_BFS_GRAPHS=0)
#   sweep      one rank per GPU of the machine, scales 20-28 (SWEEP_SCALES), --comm tca, nccl and mpi
#              (MPI over the first keys), 16 keys (8 at 28), and one GPU at 24; JSON in $OUT/sweep_*.json
#              for tools/report/tca-report (TEPS against scale, weak scaling)
#   cpu        4 CPU ranks (--device cpu), scales 16-22, --comm tca and mpi in the same run
#   tests      the unit and multi-rank test programs
#   pack       every log into $OUT/logs.tgz (the device tool brings back at most 8 files)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_MCA_btl_vader_single_copy_mechanism=cma
# tca-bfs uses no chains on TCA_PATH_CUDA: skip the transport's calibration at tcaInit.
export TCA_CUDA_PATH=ce
OUT=${OUT:-/tmp/bfs-out}
mkdir -p "$OUT"
BIN="$PWD/.devbin-bfs"
export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH
        -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS
        -x OMPI_MCA_btl_vader_single_copy_mechanism -x TCA_CUDA_PATH -x TCA_BFS_LANES
        -x TCA_BFS_GRAPHS)
BFS="$BIN/bin/tca-bfs"
export TCA_BFS_LANES=${TCA_BFS_LANES:-1} TCA_BFS_GRAPHS=${TCA_BFS_GRAPHS:-1}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nproc
  mpirun --version | head -1
  ldd "$BFS" | grep "not found"
} > "$OUT/machine.txt" 2>&1

# run NAME RANKS ARGS...: one tca-bfs run, its log in $OUT/NAME.log, a summary line.
run() {
  local name=$1 ranks=$2
  shift 2
  local start=$SECONDS
  timeout "${RUN_TIMEOUT:-120}" "${MPIRUN[@]}" -n "$ranks" "$BFS" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "== $name (np $ranks, ${*}): rc=$rc, $((SECONDS - start)) s; $(grep -E '^(tca|mpi|nccl) ' "$OUT/$name.log" | tr -s ' ' | tr '\n' ';')"
  grep -E "WRONG|skipped|rror" "$OUT/$name.log" | head -5
}

for step in "$@"; do
  case $step in
    check)
      run gpu_s10_np1 1 --device gpu --scale 10 --comm tca --comm mpi --comm nccl
      run gpu_s14_np1_td 1 --device gpu --scale 14 --direction top-down --comm tca
      run gpu_s14_np1_bu 1 --device gpu --scale 14 --direction bottom-up --comm tca
      run gpu_s16_np1 1 --device gpu --scale 16 --comm tca --comm mpi --comm nccl --levels --json
      run gpu_s12_np2 2 --device gpu --scale 12 --comm tca --comm mpi
      run gpu_s13_np3 3 --device gpu --scale 13 --comm tca --comm mpi
      run gpu_s14_np3_td 3 --device gpu --scale 14 --comm mpi --direction top-down
      run gpu_s14_np2_bu 2 --device gpu --scale 14 --comm mpi --direction bottom-up
      ;;
    sanitize)
      for comm in tca mpi nccl; do
        timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$BFS" --device gpu \
          --scale 10 --nbfs 4 --comm $comm > "$OUT/sanitize_$comm.log" 2>&1
        echo "== sanitize --comm $comm: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/sanitize_$comm.log")"
        grep -E "^=========" "$OUT/sanitize_$comm.log" | grep -v "ERROR SUMMARY" | head -12
      done
      ;;
    lanes)
      best=0
      for lanes in 1 2 4 8; do
        TCA_BFS_LANES=$lanes run gpu_s24_lanes$lanes 1 --device gpu --scale 24 --nbfs 16 --no-validate
        gteps=$(awk '$1 == "tca" {print $4}' "$OUT/gpu_s24_lanes$lanes.log")
        if awk -v a="$gteps" -v b="$best" 'BEGIN {exit !(a > b)}'; then best=$gteps; TCA_BFS_LANES_BEST=$lanes; fi
      done
      export TCA_BFS_LANES=${TCA_BFS_LANES_BEST:-$TCA_BFS_LANES}
      echo "== lanes: $TCA_BFS_LANES per vertex from here on ($best GTEPS)"
      TCA_BFS_GRAPHS=0 run gpu_s24_no_graphs 1 --device gpu --scale 24 --nbfs 16 --no-validate
      ;;
    perf)
      for scale in 20 22 24; do
        run gpu_s${scale}_perf 1 --device gpu --scale $scale --comm tca --comm mpi --comm nccl --json \
          $([[ $scale == 24 ]] && echo --levels)
      done
      ;;
    eager)
      TCA_BFS_GRAPHS=0 run gpu_s24_eager 1 --device gpu --scale 24 --comm tca --comm nccl --json
      ;;
    sweep)
      gpus=$(nvidia-smi -L | grep -c "^GPU")
      for scale in ${SWEEP_SCALES:-20 22 24 26 28}; do
        keys=16 reference=2
        (( scale >= 28 )) && keys=8 reference=1
        start=$SECONDS
        timeout 300 "${MPIRUN[@]}" -n "$gpus" "$BFS" --device gpu --scale "$scale" --nbfs $keys \
          --comm tca --comm nccl --comm mpi --reference-nbfs $reference --json \
          > "$OUT/sweep_s${scale}_np$gpus.json" 2> "$OUT/sweep_s${scale}_np$gpus.log"
        echo "== sweep scale $scale on $gpus GPUs: rc=$?, $((SECONDS - start)) s; $(grep -E '^(tca|mpi|nccl) ' "$OUT/sweep_s${scale}_np$gpus.log" | tr -s ' ' | tr '\n' ';')"
      done
      timeout 120 "${MPIRUN[@]}" -n 1 "$BFS" --device gpu --scale 24 --nbfs 16 --comm tca --comm nccl \
        --json > "$OUT/sweep_s24_np1.json" 2> "$OUT/sweep_s24_np1.log"
      echo "== sweep scale 24 on one GPU: rc=$?; $(grep -E '^(tca|nccl) ' "$OUT/sweep_s24_np1.log" | tr -s ' ' | tr '\n' ';')"
      ;;
    cpu)
      for scale in 16 20 22; do
        run cpu_s${scale}_np4 4 --device cpu --scale $scale --comm tca --comm mpi --json
      done
      ;;
    pack)
      (cd "$OUT" && tar -czf /tmp/bfs-logs.tgz ./*.log ./*.txt $(ls ./*.json 2>/dev/null) &&
        rm -f ./*.log ./*.json && mv /tmp/bfs-logs.tgz .)
      ;;
    tests)
      for ranks in 1 2; do
        timeout 300 "${MPIRUN[@]}" -n $ranks "$BIN/bin/tca_bfs_tests" > "$OUT/tests_np$ranks.log" 2>&1
        echo "== tca_bfs_tests np$ranks: rc=$? $(grep -aE '(PASSED|FAILED) +\]' "$OUT/tests_np$ranks.log" | sed 's/\x1b\[[0-9;]*m//g' | tr '\n' ' ')"
        grep -a "Failure\|rank [0-9]\]" "$OUT/tests_np$ranks.log" | head -10
      done
      ;;
  esac
done
