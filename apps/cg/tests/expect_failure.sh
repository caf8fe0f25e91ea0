#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs a command that must fail: a non-zero exit, its output matching PATTERN (grep -E), and
# nothing on stdout that starts a JSON report (a failed run writes no half report).
#   expect_failure.sh PATTERN COMMAND [ARGS...]
pattern="$1"
shift
out=$(mktemp) || exit 1
err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
status=$?
cat "$out" "$err"
if [ "$status" -eq 0 ]; then
  echo "expect_failure: the command succeeded" >&2
  exit 1
fi
if ! cat "$out" "$err" | grep -E -q -- "$pattern"; then
  echo "expect_failure: no output matches: $pattern" >&2
  exit 1
fi
if grep -q '{' "$out"; then
  echo "expect_failure: a JSON report was written" >&2
  exit 1
fi
exit 0
