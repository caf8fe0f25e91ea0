#!/usr/bin/env bash
# Installs what is missing, builds tca in build/ and runs the ping-pong benchmark on 2 ranks.
# Arguments go to tca-pingpong (e.g. scripts/run.sh --json, scripts/run.sh --help).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

install_missing_packages
configure build -DTCA_BUILD_BENCH=ON
build build tca-pingpong
echo "== mpirun -n 2 build/bench/tca-pingpong $*"
mpirun "${MPIRUN_FLAGS[@]}" -n 2 "$REPO_ROOT/build/bench/tca-pingpong" "$@"
