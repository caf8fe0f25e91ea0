#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs a command that must fail: a non-zero exit, stderr holding MESSAGE (an extended regular
# expression), and no file at PATH afterwards, nor a partial one beside it ("-" for none).
# Usage: expect_failure.sh MESSAGE PATH COMMAND...
set -u
message=$1
path=$2
shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" > "$log" 2>&1
status=$?
failed=0
if [[ $status -eq 0 ]]; then echo "expected a failure, the command succeeded"; failed=1; fi
if ! grep -Eq -- "$message" "$log"; then echo "expected the message /$message/"; failed=1; fi
if [[ $path != "-" ]] && compgen -G "$path*" > /dev/null; then
  echo "left a file behind: $(ls "$path"*)"
  rm -f "$path"*
  failed=1
fi
if [[ $failed -ne 0 ]]; then
  echo "---- output (exit status $status):"
  cat "$log"
  exit 1
fi
echo "failed as expected (exit status $status): $(grep -Em1 -- "$message" "$log")"
