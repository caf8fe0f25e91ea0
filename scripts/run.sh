#!/usr/bin/env bash
# Installs what is missing, builds tca in build/, runs the ping-pong benchmark on 2 ranks (every
# path present: CPU, and GPU where CUDA and GPUs exist), then the collectives on 4 ranks.
# Arguments go to tca-pingpong (e.g. scripts/run.sh --json, scripts/run.sh --help).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

install_missing_packages
configure build -DTCA_BUILD_BENCH=ON
build build tca-pingpong tca-coll
echo "== mpirun -n 2 build/bench/tca-pingpong $*"
mpirun "${MPIRUN_FLAGS[@]}" -n 2 "$REPO_ROOT/build/bench/tca-pingpong" "$@"
echo "== mpirun -n 4 build/bench/tca-coll -b 8 -e 1M -f 4 -c 1"
mpirun "${MPIRUN_FLAGS[@]}" -n 4 "$REPO_ROOT/build/bench/tca-coll" -b 8 -e 1M -f 4 -c 1
