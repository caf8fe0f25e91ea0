#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Symmetric storage against the full matrix on the GPU machine (device kind nvidia-h200), built
# there from source: classes S and W verified with both, classes C and B timed with the slab
# kernel, the CSR kernel and the symmetric kernel in one invocation each, then 4 CPU ranks with
# tca against MPI (classes A and B) and one CPU rank with symmetric storage (class A).
# Logs into $OUT/cg-symmetric, packed into $OUT/cg-symmetric.tgz.
# Usage: apps/cg/scripts/gpu_symmetric.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0
export OMPI_MCA_btl_vader_single_copy_mechanism=cma
OUT=${OUT:-/tmp/cg-out}
LOGS="$OUT/cg-symmetric"
mkdir -p "$LOGS"
SUMMARY="$LOGS/summary.txt"
# shellcheck source=apps/cg/scripts/device_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
record_machine
start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" -DTCA_BUILD_TESTS=OFF \
  -DTCA_UCX=OFF > "$LOGS/build.log" 2>&1 &&
  cmake --build build-gpu --target tca-cg -j16 >> "$LOGS/build.log" 2>&1 || { note "build failed"; tail -30 "$LOGS/build.log"; }
note "build: $((SECONDS - start)) s"
CG="$PWD/build-gpu/apps/cg/tca-cg"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE
        -x OMPI_MCA_btl_vader_single_copy_mechanism)

# run NAME RANKS LIMIT ARGS...: output in NAME.txt (JSON on stdout, text on stderr), a summary line.
run() {
  local name=$1 ranks=$2 limit=$3
  shift 3
  local begin=$SECONDS
  echo "# ${MPIRUN[*]} -n $ranks tca-cg $*" > "$LOGS/$name.txt"
  timeout "$limit" "${MPIRUN[@]}" -n "$ranks" "$CG" "$@" >> "$LOGS/$name.txt" 2>&1
  local rc=$?
  local verdict
  verdict=$(grep -hoE "== comm [a-z]+, .{0,40}|Verification +=  +[A-Z]+|Time in seconds =  +[0-9.]+|spmv: [0-9.]+ us per call, [0-9.]+ GB/s|skipped, .*|error: .*" "$LOGS/$name.txt" |
            sed 's/  */ /g' | tr '\n' ';')
  note "$name rc=$rc $((SECONDS - begin))s: $verdict"
}

run gpu_S 1 60 --class S --device gpu --quiet --spmv own --spmv symmetric --json
run gpu_W 1 60 --class W --device gpu --quiet --spmv own --spmv symmetric --json
run gpu_C 1 120 --class C --device gpu --quiet --spmv own --spmv csr --spmv symmetric --repetitions 3 --json
run gpu_B 1 90 --class B --device gpu --quiet --spmv own --spmv csr --spmv symmetric --repetitions 3 --json
run cpu_A_np4 4 60 --class A --device cpu --threads 4 --comm tca --comm mpi --repetitions 3 --quiet --json
run cpu_B_np4 4 120 --class B --device cpu --threads 4 --comm tca --comm mpi --repetitions 3 --quiet --json
run cpu_A_np1_symmetric 1 60 --class A --device cpu --threads 16 --spmv own --spmv symmetric --repetitions 2 --quiet --json
note "done in ${SECONDS} s"
tar -czf "$OUT/cg-symmetric.tgz" -C "$OUT" cg-symmetric && rm -rf "$LOGS"
