#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# The slab kernels against each other on a GPU machine of 4 GPUs (device kind nvidia-h100-x4
# or nvidia-h200-x4), built there from source: classes S and W verified with every GPU SpMV,
# class C on one GPU and classes C and D on 4 GPUs (1d, and D 2d) with the slab kernels and
# --comm tca and --comm nccl in one invocation each, then Nsight Compute on one launch of the
# tile kernel. Logs packed into $OUT/cg-spmv.tgz and $OUT/cg-ncu.tgz; $OUT/summary.txt and
# $OUT/table.txt.
# Usage: apps/cg/scripts/gpu_spmv.sh [check] [one] [four] [ncu] (default: all)
set -uo pipefail
STEPS=" ${*:-check one four ncu} "
wants() { [[ $STEPS == *" $1 "* ]]; }
# Never NVLink multicast on these shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_MCA_btl_vader_single_copy_mechanism=cma
export TCA_TIMEOUT_MS=${TCA_TIMEOUT_MS:-120000}
OUT=${OUT:-/tmp/cg-out}
LOGS="$OUT/cg-spmv"
mkdir -p "$LOGS"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
# shellcheck source=apps/cg/scripts/device_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
record_machine
nvidia-smi topo -m >> "$LOGS/machine.txt" 2>&1
GPUS=$(nvidia-smi -L | grep -c "^GPU")
# NCCL is loaded at run time: the system's, else the Python wheel's.
if ! ldconfig -p | grep -q 'libnccl.so.2 '; then
  wheels=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
  [[ -n "$wheels" ]] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$wheels/nccl/lib"
fi
start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" \
  -DTCA_BUILD_TESTS=OFF -DTCA_BUILD_BENCH=OFF -DTCA_UCX=OFF > "$LOGS/build.log" 2>&1 &&
  cmake --build build-gpu --target tca-cg -j "$(nproc)" >> "$LOGS/build.log" 2>&1 ||
  { note "build failed"; tail -40 "$LOGS/build.log"; exit 1; }
note "build: $((SECONDS - start)) s, $GPUS GPUs"
CG="$PWD/build-gpu/apps/cg/tca-cg"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE
        -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS -x OMPI_MCA_btl_vader_single_copy_mechanism
        -x TCA_TIMEOUT_MS)

# run NAME RANKS LIMIT ARGS...: JSON in NAME.json, text in NAME.txt, a summary line.
run() {
  local name=$1 ranks=$2 limit=$3
  shift 3
  local begin=$SECONDS
  echo "# mpirun -n $ranks tca-cg $*" > "$LOGS/$name.txt"
  timeout "$limit" "${MPIRUN[@]}" -n "$ranks" "$CG" "$@" > "$LOGS/$name.json" 2>> "$LOGS/$name.txt"
  local rc=$?
  local verdict
  verdict=$(grep -hoE "Verification +=  +[A-Z]+|Time in seconds =  +[0-9.]+|spmv: [0-9.]+ us per call, [0-9.]+ GB/s|skipped, .*|error: .*" "$LOGS/$name.txt" |
            sed 's/  */ /g' | tr '\n' ';')
  note "$name rc=$rc $((SECONDS - begin))s: $verdict"
}

G=(--device gpu --quiet --json)
if wants check; then
  run gpu_S_np1 1 60 --class S "${G[@]}" --spmv own --spmv slab-rows --spmv slab-tiles --spmv csr
  run gpu_W_np1 1 60 --class W "${G[@]}" --spmv own --spmv slab-rows --spmv slab-tiles --spmv csr
  run gpu_W_np4_2d 4 90 --class W "${G[@]}" --partition 2d --comm tca --spmv slab-rows --spmv slab-tiles
  run gpu_B_np1 1 90 --class B "${G[@]}" --spmv slab-rows --spmv slab-tiles
fi
if wants one; then
  run gpu_C_np1 1 150 --class C "${G[@]}" --spmv slab-rows --spmv slab-tiles --spmv own --repetitions 2
fi
if wants four && (( GPUS >= 4 )); then
  run gpu_C_np4 4 120 --class C "${G[@]}" --comm tca --comm nccl --spmv own --spmv slab-tiles --repetitions 2
  run gpu_D_np4 4 200 --class D "${G[@]}" --comm tca --comm nccl --spmv slab-rows --spmv own
  run gpu_D_np4_2d 4 120 --class D "${G[@]}" --partition 2d --comm tca --comm nccl --spmv own
fi

# The table: every configuration's time and SpMV (per GPU: the bytes of all ranks / ranks).
python3 - "$LOGS" > "$OUT/table.txt" <<'PY'
import json, sys, glob, os
print("| run | ranks | comm | spmv | kernel | verified | time (s) | SpMV (us) | MB per SpMV per GPU | TB/s per GPU | comm per step (us) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        doc = json.load(open(path))
    except Exception:
        continue
    ranks = doc.get("ranks", 1)
    for row in doc.get("rows", []):
        b = row.get("breakdown", {})
        us, gbps, nbytes = b.get("spmv_us", 0), b.get("spmv_GBps", 0), b.get("spmv_bytes", 0)
        print(f"| {os.path.basename(path)[:-5]} | {ranks} | {row['comm']} | {row['spmv']} | {row.get('spmv_kernel', '')} | "
              f"{row.get('verified', '')} | {row['time_s']:.4f} | {us:.1f} | {nbytes / ranks / 1e6:.1f} | {gbps / ranks / 1e3:.3f} | "
              f"{sum(p['per_step_us'] for p in b.get('phases', []) if p['phase'] in ('exchange', 'reduce', 'allreduce')):.1f} |")
PY
cat "$OUT/table.txt"
tar -czf "$OUT/cg-spmv.tgz" -C "$OUT" cg-spmv

# Nsight Compute: one launch of a slab kernel (class C on one GPU; class D on rank 0 of 4).
if wants ncu && command -v ncu > /dev/null; then
  NCU="$OUT/cg-ncu"
  mkdir -p "$NCU"
  sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats)
  profile() {  # profile NAME PATTERN LIMIT RANKS ARGS...
    local name=$1 pattern=$2 limit=$3 ranks=$4
    shift 4
    if (( ranks == 1 )); then
      timeout "$limit" ncu -k "regex:$pattern" -s 3 -c 1 "${sections[@]}" "$CG" "$@" > "$NCU/$name.txt" 2>&1
    else
      timeout "$limit" "${MPIRUN[@]}" -n 1 ncu -k "regex:$pattern" -s 3 -c 1 "${sections[@]}" "$CG" "$@" \
        : -n $((ranks - 1)) "$CG" "$@" > "$NCU/$name.txt" 2>&1
    fi
    note "ncu $name rc=$?: $(grep -E ' Duration|DRAM Throughput|L2 Cache Throughput|Memory Throughput' "$NCU/$name.txt" | sed 's/  */ /g' | tr '\n' ';')"
    tar -czf "$OUT/cg-ncu.tgz" -C "$OUT" cg-ncu
  }
  N=(--device gpu --quiet --no-breakdown)
  (( GPUS >= 4 )) && profile D_np4_tiles spmv_tile_kernel 150 4 --class D "${N[@]}" --spmv slab-tiles
  profile C_np1_tiles spmv_tile_kernel 100 1 --class C "${N[@]}" --spmv slab-tiles
fi
note "done in ${SECONDS} s"
rm -rf "$LOGS" "$OUT/cg-ncu"
