#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# expect_note.sh PATTERN COMMAND...: runs COMMAND; passes where it exits 0 and its output
# matches PATTERN (grep -E), e.g. the note of a part skipped on purpose next to verified runs.
pattern="$1"
shift
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
status=$?
cat "$out"
if [ "$status" -ne 0 ]; then
  echo "expect_note: the command failed (exit $status)" >&2
  exit 1
fi
if ! grep -E -q -- "$pattern" "$out"; then
  echo "expect_note: no output matches: $pattern" >&2
  exit 1
fi
exit 0
