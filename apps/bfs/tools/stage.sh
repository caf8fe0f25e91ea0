#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Copies tca-bfs, libtca and the libraries the GPU machine may lack into .devbin-bfs/ (ignored
# by git, carried to the device machine), for apps/bfs/tools/device_run.sh.
# Usage: apps/bfs/tools/stage.sh [BUILD_DIR] (default build-bfs)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
build="${1:-build-bfs}"
rm -rf .devbin-bfs && mkdir -p .devbin-bfs/bin .devbin-bfs/lib
mkdir -p .git/info
grep -qx "/.devbin-bfs/" .git/info/exclude 2>/dev/null || echo "/.devbin-bfs/" >> .git/info/exclude
cp "$build/apps/bfs/tca-bfs" .devbin-bfs/bin/
for test in tca_bfs_tests tca_bfs_mpi_tests; do
  [[ -x "$build/apps/bfs/$test" ]] && cp "$build/apps/bfs/$test" .devbin-bfs/bin/
done
cp -P "$build"/src/libtca.so* .devbin-bfs/lib/
for library in libfmt.so.9 libcudart.so.13; do
  cp -L "$(ldconfig -p | awk -v name="$library" '$1 == name {print $NF; exit}')" .devbin-bfs/lib/
done
du -sh .devbin-bfs
