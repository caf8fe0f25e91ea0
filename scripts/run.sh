#!/usr/bin/env bash
# Installs what is missing, builds tca in build/, runs the ping-pong benchmark on 2 ranks (every
# path present: CPU, and GPU where CUDA and GPUs exist), then the collectives: on GPU memory with
# one rank per GPU where CUDA and GPUs exist, else on 4 ranks in host memory.
# Arguments go to tca-pingpong (e.g. scripts/run.sh --json, scripts/run.sh --help).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

install_missing_packages
configure build -DTCA_BUILD_BENCH=ON
build build tca-pingpong tca-coll
echo "== mpirun -n 2 build/bench/tca-pingpong $*"
mpirun "${MPIRUN_FLAGS[@]}" -n 2 "$REPO_ROOT/build/bench/tca-pingpong" "$@"

coll_ranks=4
coll_args=(-b 8 -e 1M -f 4 -c 1)
coll_flags=()
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [[ "$gpus" -gt 0 && -n "$(cuda_compiler_args)" ]]; then
  coll_ranks=$gpus
  coll_args+=(--memory gpu)
  export NCCL_NVLS_ENABLE=0  # NCCL's reference rows: never NVLink multicast
  coll_flags=(-x NCCL_NVLS_ENABLE)
fi
echo "== mpirun -n $coll_ranks build/bench/tca-coll ${coll_args[*]}"
mpirun "${MPIRUN_FLAGS[@]}" "${coll_flags[@]}" -n "$coll_ranks" "$REPO_ROOT/build/bench/tca-coll" \
  "${coll_args[@]}"
