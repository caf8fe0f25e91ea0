#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Copies tca-cg, its test-matrix writer, libtca and the small libraries the GPU machine may
# lack into .cgbin/ (ignored by git; carried to the machine by the device tool).
# Usage: apps/cg/scripts/stage.sh [BUILD_DIR] (default build-cg)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
build="${1:-build-cg}"
rm -rf .cgbin && mkdir -p .cgbin/bin .cgbin/lib
mkdir -p .git/info && { grep -qx "/.cgbin/" .git/info/exclude 2>/dev/null || echo "/.cgbin/" >> .git/info/exclude; }
cp "$build/apps/cg/tca-cg" "$build/apps/cg/tests/cg_test_matrices" .cgbin/bin/
cp -P "$build"/src/libtca.so* .cgbin/lib/
for library in libfmt.so.9 libcudart.so.13; do
  cp -L "$(ldconfig -p | awk -v name="$library" '$1 == name {print $NF; exit}')" .cgbin/lib/ 2>/dev/null ||
    cp -L "/usr/local/cuda/lib64/$library" .cgbin/lib/
done
du -sh .cgbin
