#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# The CUDA transport's checks on the GPU machine (the device tool's nvidia-h200-x2, -x4 or
# -x8), from binaries built on the development machine and carried in .devbin/
# (tools/device/stage.sh).
# Usage: [TCA_RANKS=N] tools/device/cuda_check.sh [tests] [colltests] [topo] [tests-more]
#        [sanitize] [bench] [pairs] [coll] [coll-targets] [inline] (default: all)
# TCA_RANKS (default 2): ranks of the suites, tca-topo and tca-coll, one GPU each.
# Logs go to $OUT (the device tool brings that folder back).
set -uo pipefail
# Never NVLink multicast on these shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# The image's Open MPI sets no single-copy mechanism, which leaves no RMA window component.
export OMPI_MCA_btl_vader_single_copy_mechanism=cma
OUT=${OUT:-/tmp/tca-out}
RANKS=${TCA_RANKS:-2}
mkdir -p "$OUT"
BIN="$PWD/.devbin"
export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
export TCA_CUDA_CALIBRATION_FILE="$OUT/calibration.json"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none
        -x LD_LIBRARY_PATH -x TCA_CUDA_CALIBRATION_FILE -x NCCL_NVLS_ENABLE
        -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS
        -x OMPI_MCA_btl_vader_single_copy_mechanism)
STEPS=("$@")
[[ ${#STEPS[@]} -eq 0 ]] &&
  STEPS=(tests colltests topo tests-more sanitize bench pairs coll coll-targets inline)
SUMMARY=()
wants() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }
record() { SUMMARY+=("$1: $2"); echo "== $1: $2"; }

{
  date -u
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.sm,clocks.mem --format=csv
  nvidia-smi topo -m
  mpirun --version | head -1
} > "$OUT/machine.txt" 2>&1
missing=$(ldd "$BIN"/bin/* 2>/dev/null | grep "not found" | sort -u)
if [[ -n "$missing" ]]; then echo "missing libraries:"; echo "$missing"; exit 1; fi

# run_tests RANKS TIMEOUT_S [PROGRAM]: a GPU suite (default the transport's) on RANKS ranks
# (3 ranks on 2 GPUs share one).
run_tests() {
  local program=${3:-tca_cuda_tests}
  local log="$OUT/tests_np$1.tmp"
  timeout "$2" "${MPIRUN[@]}" -n "$1" "$BIN/bin/$program" --gtest_brief=1 > "$log" 2>&1
  local rc=$?
  { echo "==== $program, $1 ranks: rc=$rc"; sed 's/\x1b\[[0-9;]*m//g' "$log"; } >> "$OUT/tests.log"
  record "$program np$1" "rc=$rc $(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -aE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' | tr '\n' ' ')"
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -aE "FAILED|Failure|rror" | head -30
  rm -f "$log"
}

wants tests && run_tests "$RANKS" 200
if wants colltests; then
  run_tests "$RANKS" 150 tca_coll_gpu_tests
  # An odd rank count on as many GPUs, when there are enough (else one rank).
  (( RANKS > 3 )) && run_tests $(( RANKS % 2 == 0 ? RANKS - 1 : RANKS - 2 )) 150 tca_coll_gpu_tests
  run_tests 1 100 tca_coll_gpu_tests
fi

if wants topo; then
  timeout $(( 30 * RANKS )) "${MPIRUN[@]}" -n "$RANKS" "$BIN/bin/tca-topo" > "$OUT/topo.log" 2>&1
  record "tca-topo" "rc=$?"
  cat "$OUT/topo.log"
fi

if wants tests-more; then
  run_tests 1 60
  run_tests 3 60
fi

if wants sanitize; then
  filter='Cuda/GpuTransferTest.SizesAndOddOffsetsByDescriptorPush/gpu_to_gpu_*:Cuda/GpuTransferTest.ChainsOfOneToManyTransfers/gpu_to_gpu_*:Cuda/GpuStreamTest.*:GpuDeviceApiTest.*'
  for tool in memcheck racecheck; do
    timeout 75 "${MPIRUN[@]}" -n 2 compute-sanitizer --tool "$tool" --error-exitcode 17 \
      "$BIN/bin/tca_cuda_tests" --gtest_brief=1 --gtest_filter="$filter" \
      > "$OUT/sanitizer.tmp" 2>&1
    rc=$?
    { echo "==== $tool: rc=$rc"; sed 's/\x1b\[[0-9;]*m//g' "$OUT/sanitizer.tmp"; } >> "$OUT/sanitizer.log"
    record "compute-sanitizer $tool" "rc=$rc $(grep -aE 'ERROR SUMMARY|PASSED  \]|FAILED  \]' "$OUT/sanitizer.tmp" | sed 's/\x1b\[[0-9;]*m//g' | sort | uniq -c | tr '\n' ' ')"
    rm -f "$OUT/sanitizer.tmp"
  done
fi

# NCCL (the reference rows) is loaded at run time: the system's, else the Python wheel's.
use_nccl() {
  ldconfig -p | grep -q 'libnccl.so.2 ' && return
  local wheels
  wheels=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
  [[ -n "$wheels" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$wheels/nccl/lib"
}

if wants bench && [[ -x "$BIN/bin/tca-pingpong" ]]; then
  use_nccl
  gpu_rows=(-p cuda.ce -p cuda.sm -p cuda.resident -p cuda.auto -p ref.cuda_memcpy_peer
            -p ref.nccl_sendrecv)
  timeout 90 "${MPIRUN[@]}" -n 2 "$BIN/bin/tca-pingpong" "${gpu_rows[@]}" \
    -p cuda.device_put_signal -p cuda.device_put_inline -b 8 -e 8 -r 11 --json \
    > "$OUT/pingpong_8B.json" 2> "$OUT/pingpong.log"
  record "tca-pingpong 8 B" "rc=$?"
  timeout 200 "${MPIRUN[@]}" -n 2 "$BIN/bin/tca-pingpong" "${gpu_rows[@]}" \
    -p cuda.device_put_signal -p cuda.device_put_inline -b 4K -e 256M -f 4 --json \
    > "$OUT/pingpong_sizes.json" \
    2>> "$OUT/pingpong.log"
  record "tca-pingpong 4 KiB .. 256 MiB" "rc=$?"
  cat "$OUT/pingpong.log"
fi

# run_coll NAME TIMEOUT_S ARGS...: tca-coll on GPU memory, RANKS ranks; coll_NAME.json and .log.
# A stuck GPU program fails after 10 s instead of tca's default minute.
run_coll() {
  local name=$1 limit=$2
  shift 2
  TCA_TIMEOUT_MS=10000 timeout "$limit" "${MPIRUN[@]}" -x TCA_TIMEOUT_MS -n "$RANKS" \
    "$BIN/bin/tca-coll" --memory gpu --json "$@" > "$OUT/coll_$name.json" 2> "$OUT/coll_$name.log"
  local rc=$?
  record "tca-coll $name" "rc=$rc"
  if [[ $rc -ne 0 ]]; then
    awk '/^ *all(reduce|gather) / && $10 > 0' "$OUT/coll_$name.log" | head -20  # wrong rows
    tail -20 "$OUT/coll_$name.log"
  fi
  return $rc
}

# GPU 0 against each other GPU of the job's RANKS, one pair at a time (tca-pingpong takes two
# ranks; CUDA_VISIBLE_DEVICES gives them GPU 0 and GPU k): latency at 8 B, bandwidth to 256 MiB.
if wants pairs && [[ -x "$BIN/bin/tca-pingpong" ]]; then
  use_nccl
  pair_paths=(cuda.ce cuda.sm cuda.auto cuda.device_put_signal ref.cuda_memcpy_peer
              ref.nccl_sendrecv)
  path_options=()
  for path in "${pair_paths[@]}"; do path_options+=(-p "$path"); done
  for (( peer = 1; peer < RANKS; ++peer )); do
    CUDA_VISIBLE_DEVICES=0,$peer timeout 90 "${MPIRUN[@]}" -x CUDA_VISIBLE_DEVICES -n 2 \
      "$BIN/bin/tca-pingpong" "${path_options[@]}" -b 8 -e 256M -f 32 --json \
      > "$OUT/pairs_0_$peer.json" 2>> "$OUT/pairs.log"
    record "tca-pingpong GPU 0 - GPU $peer" "rc=$?"
  done
  python3 - "$OUT" "$RANKS" "${pair_paths[@]}" <<'PY'
import json, sys
out, ranks, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("GPU 0 to GPU k, gpu->gpu: one-way latency at 8 B (us) | bandwidth at 256 MiB (GB/s)")
print(f"{'k':>2} " + " ".join(f"{p.split('.')[1][:12]:>12}" for p in paths) + " |" +
      " ".join(f"{p.split('.')[1][:12]:>12}" for p in paths))
for peer in range(1, ranks):
    try:
        rows = json.load(open(f"{out}/pairs_0_{peer}.json"))["rows"]
    except (OSError, ValueError, KeyError):
        print(f"{peer:>2} (no result)")
        continue
    cell = lambda path, size, key: next((f"{r[key]:12.2f}" for r in rows
                                         if r["path"] == path and r["bytes"] == size and
                                         r["src"] == r["dst"] == "gpu"), f"{'-':>12}")
    print(f"{peer:>2} " + " ".join(cell(p, 8, "latency_us") for p in paths) + " |" +
          " ".join(cell(p, 256 << 20, "bandwidth_GBps") for p in paths))
PY
fi

if wants coll && [[ -x "$BIN/bin/tca-coll" ]]; then
  use_nccl
  allreduce=(--collective allreduce -b 8 -e 128M)
  allgather=(--collective allgather -b 1K -e 64M)
  # Every iteration checked on fresh data (few iterations), then the timed sweep of what passed.
  run_coll check_allreduce 90 "${allreduce[@]}" -c 1 -n 3 -w 1 -r 1 &&
    run_coll allreduce 270 "${allreduce[@]}"
  run_coll check_allgather 60 "${allgather[@]}" -c 1 -n 3 -w 1 -r 1 &&
    run_coll allgather 180 "${allgather[@]}"
  # The header and the sizes the collective targets name (wrong results anywhere fail the checks).
  for name in allreduce allgather; do
    [[ -f "$OUT/coll_$name.log" ]] && awk '/^#/ || $3 == 8 || $3 == 131072 ||
      $3 == 67108864 || $3 == 134217728' "$OUT/coll_$name.log"
  done
fi

# The sizes the collective targets name (8 B, 128 KiB, 64 and 128 MiB), every implementation, in one invocation per size.
if wants coll-targets && [[ -x "$BIN/bin/tca-coll" ]]; then
  use_nccl
  for sizes in "allreduce -b 8 -e 8" "allgather -b 128K -e 128K" "allreduce -b 128M -e 128M -n 20" \
               "allgather -b 64M -e 64M -n 20"; do
    read -r collective range <<< "$sizes"
    # shellcheck disable=SC2086  # the range is several options
    timeout 150 "${MPIRUN[@]}" -n "$RANKS" "$BIN/bin/tca-coll" --memory gpu -r 5 --collective $sizes \
      >> "$OUT/coll_targets.log" 2>&1
    record "tca-coll $collective $range" "rc=$?"
  done
  grep -av "^$" "$OUT/coll_targets.log"
fi

# Device-initiated ping-pong of small messages: inline messages against put with signal.
if wants inline && [[ -x "$BIN/bin/tca-pingpong" ]]; then
  TCA_CUDA_PATH=ce timeout 60 "${MPIRUN[@]}" -x TCA_CUDA_PATH -n 2 "$BIN/bin/tca-pingpong" \
    -p cuda.device_put_inline -p cuda.device_put_signal -b 4 -e 64 -f 2 -r 11 \
    > "$OUT/pingpong_inline.log" 2>&1
  record "tca-pingpong inline" "rc=$?"
  grep -a "cuda.device" "$OUT/pingpong_inline.log"
fi

echo "==== summary"
printf '%s\n' "${SUMMARY[@]}"
