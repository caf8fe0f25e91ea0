#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Copies what tools/device/cuda_check.sh runs into .devbin/ (ignored by git; carried to the GPU
# machine): the programs of a build directory, libtca and the shared libraries that machine may
# lack. Usage: tools/device/stage.sh [BUILD_DIR] (default build-cuda)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build="${1:-build-cuda}"
rm -rf .devbin && mkdir -p .devbin/bin .devbin/lib
mkdir -p .git/info && { grep -qx "/.devbin/" .git/info/exclude 2>/dev/null || echo "/.devbin/" >> .git/info/exclude; }
for program in tests/cuda/tca_cuda_tests tests/cuda/tca_coll_gpu_tests tools/tca-topo \
               tools/tca-ipc-copy-probe bench/tca-pingpong bench/tca-coll; do
  [[ -x "$build/$program" ]] && cp "$build/$program" .devbin/bin/
done
cp -P "$build"/src/libtca.so* .devbin/lib/
for library in libfmt.so.9 libcudart.so.13; do
  cp -L "$(ldconfig -p | awk -v name="$library" '$1 == name {print $NF; exit}')" .devbin/lib/
done
du -sh .devbin
