#!/usr/bin/env bash
# The CUDA transport's checks on the GPU machine (the device tool's nvidia-h200-x2), from
# binaries built on the development machine and carried in .devbin/ (tools/device/stage.sh).
# Usage: tools/device/cuda_check.sh [tests] [topo] [tests-more] [sanitize] [bench] (default: all)
# Logs go to $OUT (the device tool brings that folder back).
set -uo pipefail
# Never NVLink multicast on these shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/tca-out}
mkdir -p "$OUT"
BIN="$PWD/.devbin"
export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
export TCA_CUDA_CALIBRATION_FILE="$OUT/calibration.json"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none
        -x LD_LIBRARY_PATH -x TCA_CUDA_CALIBRATION_FILE -x NCCL_NVLS_ENABLE
        -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS)
STEPS=("$@")
[[ ${#STEPS[@]} -eq 0 ]] && STEPS=(tests topo tests-more sanitize bench)
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

# run_tests RANKS TIMEOUT_S: the GPU suite on RANKS ranks (3 ranks on 2 GPUs share one).
run_tests() {
  local log="$OUT/tests_np$1.tmp"
  timeout "$2" "${MPIRUN[@]}" -n "$1" "$BIN/bin/tca_cuda_tests" --gtest_brief=1 > "$log" 2>&1
  local rc=$?
  { echo "==== $1 ranks: rc=$rc"; sed 's/\x1b\[[0-9;]*m//g' "$log"; } >> "$OUT/tests.log"
  record "tests np$1" "rc=$rc $(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -aE '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' | tr '\n' ' ')"
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -aE "FAILED|Failure|rror" | head -30
  rm -f "$log"
}

wants tests && run_tests 2 200

if wants topo; then
  timeout 60 "${MPIRUN[@]}" -n 2 "$BIN/bin/tca-topo" > "$OUT/topo.log" 2>&1
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

if wants bench && [[ -x "$BIN/bin/tca-pingpong" ]]; then
  # NCCL (the reference row) is loaded at run time: the system's, else the Python wheel's.
  if ! ldconfig -p | grep -q 'libnccl.so.2 '; then
    wheels=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
    [[ -n "$wheels" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$wheels/nccl/lib"
  fi
  gpu_rows=(-p cuda.ce -p cuda.sm -p cuda.auto -p ref.cuda_memcpy_peer -p ref.nccl_sendrecv)
  timeout 90 "${MPIRUN[@]}" -n 2 "$BIN/bin/tca-pingpong" "${gpu_rows[@]}" \
    -p cuda.device_put_signal -b 8 -e 8 -r 11 --json > "$OUT/pingpong_8B.json" 2> "$OUT/pingpong.log"
  record "tca-pingpong 8 B" "rc=$?"
  timeout 200 "${MPIRUN[@]}" -n 2 "$BIN/bin/tca-pingpong" "${gpu_rows[@]}" \
    -p cuda.device_put_signal -b 4K -e 256M -f 4 --json > "$OUT/pingpong_sizes.json" \
    2>> "$OUT/pingpong.log"
  record "tca-pingpong 4 KiB .. 256 MiB" "rc=$?"
  cat "$OUT/pingpong.log"
fi

echo "==== summary"
printf '%s\n' "${SUMMARY[@]}"
