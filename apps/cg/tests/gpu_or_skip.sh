#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs the command where `nvidia-smi -L` lists a GPU; else exits 77, which ctest counts as
# skipped (SKIP_RETURN_CODE).
if ! nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  echo "no GPU here: skipped"
  exit 77
fi
exec "$@"
