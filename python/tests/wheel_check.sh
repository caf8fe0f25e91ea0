#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# The wheel check: `pip wheel` of the repository (libtca built by scikit-build-core with the
# project's CMake; CUDA and UCX left out to keep it short), installed into a fresh folder and
# used from outside the source tree: tca.info alone, then a 2-rank ring under the tca-run the
# wheel carries. Usage: wheel_check.sh REPO PYTHON BUILD_DIR (scikit-build-core's build folder,
# kept between runs so that a later check rebuilds only what changed).
set -euo pipefail
repo=$1
python=$2
build_dir=$3
work="$(mktemp -d /tmp/tca-wheel.XXXXXX)"
trap 'rm -rf "$work"' EXIT
launcher=()
if command -v ccache >/dev/null; then
  launcher=(--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache
            --config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache)
fi
"$python" -m pip wheel -q --no-build-isolation --no-deps -w "$work/dist" \
  --config-settings=build-dir="$build_dir" \
  --config-settings=cmake.define.TCA_CUDA=OFF --config-settings=cmake.define.TCA_UCX=OFF \
  "${launcher[@]}" "$repo"
"$python" -m pip install -q --no-deps --no-index --target "$work/site" "$work"/dist/tca-*.whl
cd "$work"
export PYTHONPATH="$work/site"
"$python" -c 'import tca, sys; assert tca.__file__.startswith(sys.argv[1]), tca.__file__' "$work/site"
env -u TCA_BOOTSTRAP "$python" -m tca.info
"$work/site/tca/bin/tca-run" -n 2 "$python" "$repo/python/examples/ring.py"
echo "wheel check passed: $(ls "$work"/dist)"
