#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs the command where `nvidia-smi -L` lists a GPU; else exits 77, which ctest counts as
# skipped (SKIP_RETURN_CODE). With CG_EXPECT set, the command must also print that text; with
# CG_MAX_ZETA_ERROR (the command prints --json), every run's zeta error must be at most that
# (NPB verifies to 1e-10; rounding alone keeps class S near 1e-15).
if ! nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  echo "no GPU here: skipped"
  exit 77
fi
if [ -z "${CG_EXPECT:-}" ] && [ -z "${CG_MAX_ZETA_ERROR:-}" ]; then
  exec "$@"
fi
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || exit "$rc"
if [ -n "${CG_EXPECT:-}" ] && ! printf '%s\n' "$out" | grep -qF -- "$CG_EXPECT"; then
  echo "expected in the output: $CG_EXPECT"
  exit 1
fi
if [ -n "${CG_MAX_ZETA_ERROR:-}" ]; then
  errors=$(printf '%s\n' "$out" | grep -o '"zeta_error": *[-+0-9.eE]*' | sed 's/.*: *//')
  if [ -z "$errors" ]; then
    echo "no zeta_error in the output"
    exit 1
  fi
  if ! printf '%s\n' "$errors" |
    awk -v limit="$CG_MAX_ZETA_ERROR" '{ if ($1 + 0 > limit + 0) { print "zeta error " $1 " above " limit; bad = 1 } } END { exit bad }'; then
    exit 1
  fi
fi
