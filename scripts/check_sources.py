#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""Checks that every source file of the tree carries the project's SPDX license line.

Source files: C, C++ and CUDA sources and headers, shell and Python scripts, CMake files and
templates. Build trees (build*/), results/ and hidden folders are not looked at. Prints each
file that lacks the line and exits 1 when any does, 0 otherwise.

usage: check_sources.py [ROOT]   (default: the tree this script is in)
"""
import os
import sys

LICENSE_LINE = "SPDX-License-Identifier: BSD-3-Clause"
SUFFIXES = (".c", ".cc", ".h", ".cu", ".cuh", ".sh", ".py", ".cmake", ".in")
NAMES = ("CMakeLists.txt", "tca-report", "run")
# The license line must come this early (after a shebang line and a comment or two).
HEAD_LINES = 3


def is_source(name):
    return name.endswith(SUFFIXES) or name in NAMES


def skipped_dir(relative):
    first = relative.split(os.sep)[0]
    return first.startswith("build") or first == "results" or (
        first.startswith(".") and first != ".ci")


def lacking(root):
    missing = []
    for folder, dirs, files in os.walk(root):
        relative = os.path.relpath(folder, root)
        if relative != "." and skipped_dir(relative):
            dirs[:] = []
            continue
        dirs.sort()
        for name in sorted(files):
            if not is_source(name):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as handle:
                head = [handle.readline() for _ in range(HEAD_LINES)]
            if not any(LICENSE_LINE in line for line in head):
                missing.append(os.path.relpath(path, root))
    return missing


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    missing = lacking(root)
    for path in missing:
        print(f"{path}: no '{LICENSE_LINE}' in its first {HEAD_LINES} lines")
    if missing:
        print(f"{len(missing)} source files lack the license line", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
