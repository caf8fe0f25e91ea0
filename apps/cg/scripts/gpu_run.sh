#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# tca-cg on the GPU machine (device kind nvidia-h200: one GPU, 16 cores) from binaries staged
# by apps/cg/scripts/stage.sh into .cgbin/ (built there from source when they do not start).
# Correctness (classes S and W at 1 rank on the GPU, 2-4 ranks sharing it over MPI, tca and
# NCCL between ranks sharing it, a Matrix Market solve), then the timed runs: classes B and C
# on the GPU (own SpMV kernel and cuSPARSE, CUDA graphs and not) and classes A and B on the
# 16 cores (tca against MPI). Logs into $OUT.
# Usage: apps/cg/scripts/gpu_run.sh [check] [tune] [gpu] [cpu] (default: all four)
set -uo pipefail
STEPS=" ${*:-check tune gpu cpu} "
wants() { [[ $STEPS == *" $1 "* ]]; }
export NCCL_NVLS_ENABLE=0
export OMPI_MCA_btl_vader_single_copy_mechanism=cma
export TCA_TIMEOUT_MS=${TCA_TIMEOUT_MS:-20000}
OUT=${OUT:-/tmp/cg-out}
mkdir -p "$OUT"
BIN="$PWD/.cgbin"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $dir ]] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$dir"
done
export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE
        -x OMPI_MCA_btl_vader_single_copy_mechanism -x TCA_TIMEOUT_MS)
LOG="$OUT/all.log"
SUMMARY="$OUT/summary.txt"
: > "$LOG"
: > "$SUMMARY"
# shellcheck source=apps/cg/scripts/device_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"

record_machine

if ldd "$BIN/bin/tca-cg" | grep -q "not found" || ! "$BIN/bin/tca-cg" --help > /dev/null 2>&1; then
  note "carried binaries do not start here: $(ldd "$BIN/bin/tca-cg" | grep 'not found' | tr '\n' ' ')"
  note "building from source"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTCA_BUILD_TESTS=ON -DTCA_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" >> "$LOG" 2>&1 &&
    cmake --build build-gpu --target tca-cg cg_test_matrices -j16 >> "$LOG" 2>&1 || { note "build failed"; exit 1; }
  mkdir -p "$BIN/bin"
  cp build-gpu/apps/cg/tca-cg build-gpu/apps/cg/tests/cg_test_matrices "$BIN/bin/"
  export LD_LIBRARY_PATH="$PWD/build-gpu/src:$LD_LIBRARY_PATH"
fi
CG="$BIN/bin/tca-cg"

# run NAME RANKS TIMEOUT ARGS...: one tca-cg run, its output into all.log, a summary line.
run() {
  local name=$1 ranks=$2 limit=$3
  shift 3
  local start=$SECONDS
  echo "==== $name: -n $ranks $*" >> "$LOG"
  timeout "$limit" "${MPIRUN[@]}" -n "$ranks" "$CG" "$@" > "$OUT/run.tmp" 2>&1
  local rc=$?
  cat "$OUT/run.tmp" >> "$LOG"
  local verdict
  verdict=$(grep -hoE "Verification +=  +[A-Z]+|Time in seconds =  +[0-9.]+|Mop/s total +=  +[0-9.]+|spmv: [0-9.]+ us per call, [0-9.]+ GB/s|skipped, .*|error: .*|tolerance [A-Za-z ]+reached" "$OUT/run.tmp" |
            sed 's/  */ /g' | tr '\n' ';')
  note "$name rc=$rc $((SECONDS - start))s: $verdict"
}

# ---- correctness on the GPU ----
G=(--device gpu --quiet)
if wants check; then
run gpu_S_np1 1 120 --class S "${G[@]}" --spmv own --spmv csr --spmv cusparse
run gpu_W_np1 1 120 --class W "${G[@]}" --spmv own --spmv csr --spmv cusparse
run gpu_S_np1_nograph 1 120 --class S "${G[@]}" --no-graph
run gpu_W_np1_2d 1 120 --class W "${G[@]}" --partition 2d
for ranks in 2 3; do
  run gpu_S_np${ranks}_mpi ${ranks} 120 --class S "${G[@]}" --comm mpi
  run gpu_W_np${ranks}_mpi ${ranks} 120 --class W "${G[@]}" --comm mpi
done
run gpu_W_np4_2d_mpi 4 120 --class W "${G[@]}" --comm mpi --partition 2d
run gpu_S_np2_tca 2 90 --class S "${G[@]}" --comm tca
run gpu_S_np2_nccl 2 90 --class S "${G[@]}" --comm nccl
mkdir -p /tmp/cg-matrices && "$BIN/bin/cg_test_matrices" /tmp/cg-matrices
run gpu_mtx_np1 1 60 --matrix /tmp/cg-matrices/random_real_general.mtx --tol 1e-11 --max-error 1e-8 "${G[@]}"
run gpu_mtx_np2_mpi 2 60 --matrix /tmp/cg-matrices/laplace_integer_symmetric.mtx --tol 1e-11 --max-error 1e-8 \
  "${G[@]}" --comm mpi --partition 1d
run gpu_mtx_np4_2d_mpi 4 60 --matrix /tmp/cg-matrices/random_real_symmetric.mtx --tol 1e-11 --max-error 1e-8 \
  "${G[@]}" --comm mpi --partition 2d
fi

# ---- the slab kernel's shapes: lanes per row, next row prefetched or not ----
if wants tune; then
for class in S W; do
  for lanes in 8 16 32; do
    run gpu_${class}_slab${lanes} 1 60 --class $class "${G[@]}" --slab-lanes $lanes
  done
done
for class in B C; do
  run gpu_${class}_slab16_noprefetch 1 120 --class $class "${G[@]}" --slab-lanes 16 --no-slab-prefetch
  run gpu_${class}_slab8_noprefetch 1 120 --class $class "${G[@]}" --slab-lanes 8 --no-slab-prefetch
  for lanes in 8 16 32; do
    run gpu_${class}_slab${lanes} 1 120 --class $class "${G[@]}" --slab-lanes $lanes
  done
done
fi

# ---- timed: one GPU ----
if wants gpu; then
run gpu_B 1 200 --class B --device gpu --spmv own --spmv csr --spmv cusparse --repetitions 3 --json
cp "$OUT/run.tmp" "$OUT/gpu_B.txt"
run gpu_C 1 200 --class C --device gpu --spmv own --spmv csr --spmv cusparse --repetitions 3 --json
cp "$OUT/run.tmp" "$OUT/gpu_C.txt"
run gpu_C_nograph 1 120 --class C --device gpu --no-graph --no-breakdown --repetitions 2
fi

# ---- timed: the 16 cores, tca against MPI in the same run ----
if wants cpu; then
run cpu_A_np4 4 200 --class A --device cpu --threads 4 --comm tca --comm mpi --repetitions 3 --quiet
run cpu_B_np4 4 300 --class B --device cpu --threads 4 --comm tca --comm mpi --repetitions 3 --quiet --json
cp "$OUT/run.tmp" "$OUT/cpu_B_np4.txt"
run cpu_B_np16 16 300 --class B --device cpu --threads 1 --comm tca --comm mpi --repetitions 3 --quiet
fi
if wants cpu-direct; then
run cpu_A_np4_direct 4 200 --class A --device cpu --threads 4 --comm tca --comm mpi --tca-algorithm direct --repetitions 3 --quiet
run cpu_B_np4_direct 4 300 --class B --device cpu --threads 4 --comm tca --comm mpi --tca-algorithm direct --repetitions 3 --quiet
fi
rm -f "$OUT/run.tmp"
note "done in ${SECONDS}s"
