#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Checks that every C, C++ and CUDA source file of the tree is formatted as .clang-format says,
# with the one clang-format release the tree is formatted with; exits 1 naming the files that
# differ. `--fix` formats them in place instead. Where the clang-format on PATH is another
# release, that release is installed from pip into .cache/clang-format/ (gitignored) once.
set -euo pipefail
VERSION=18.1.8
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

find_clang_format() {
  local candidate
  for candidate in "$(command -v clang-format || true)" \
                   ".cache/clang-format/clang_format/data/bin/clang-format"; do
    if [[ -n "$candidate" && -x "$candidate" ]] &&
       "$candidate" --version 2>/dev/null | grep -q "version $VERSION"; then
      echo "$candidate"
      return 0
    fi
  done
  echo "== installing clang-format $VERSION from pip into .cache/clang-format" >&2
  python3 -m pip install -q --disable-pip-version-check --target .cache/clang-format \
    "clang-format==$VERSION" >&2 || {
    echo "error: clang-format $VERSION is needed (python3 -m pip install clang-format==$VERSION)" >&2
    return 1
  }
  echo ".cache/clang-format/clang_format/data/bin/clang-format"
}

sources() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard -- '*.c' '*.cc' '*.h' '*.cu' '*.cuh'
  else
    find . \( -path './build*' -o -path './.*' -o -path './results' \) -prune -o -type f \
      \( -name '*.c' -o -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print |
      sed 's|^\./||'
  fi
}

clang_format="$(find_clang_format)"
mapfile -t files < <(sources | sort)
if [[ "${1:-}" == "--fix" ]]; then
  "$clang_format" -i "${files[@]}"
  echo "== formatted ${#files[@]} files with clang-format $VERSION"
  exit 0
fi
differ=()
for file in "${files[@]}"; do
  "$clang_format" --dry-run --Werror "$file" >/dev/null 2>&1 || differ+=("$file")
done
if [[ ${#differ[@]} -gt 0 ]]; then
  printf '%s: not formatted as .clang-format says\n' "${differ[@]}"
  echo "${#differ[@]} of ${#files[@]} files differ: scripts/check_format.sh --fix formats them" >&2
  exit 1
fi
echo "== ${#files[@]} files formatted as .clang-format says (clang-format $VERSION)"
