#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs the command where `nvidia-smi -L` lists a GPU; else exits 77, which ctest counts as
# skipped (SKIP_RETURN_CODE). With CG_EXPECT set, the command must also print that text.
if ! nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  echo "no GPU here: skipped"
  exit 77
fi
if [ -z "${CG_EXPECT:-}" ]; then
  exec "$@"
fi
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || exit "$rc"
if ! printf '%s\n' "$out" | grep -qF -- "$CG_EXPECT"; then
  echo "expected in the output: $CG_EXPECT"
  exit 1
fi
