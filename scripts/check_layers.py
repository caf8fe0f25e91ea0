#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""Checks that every #include between folders of src/ points down the layers of
docs/ARCHITECTURE.md.

Each file of src/ belongs to its first folder (src/transport/cuda/x.cc to "transport"). An
#include "..." of another folder must be one of that folder's allowed layers below
(LAYERS_BELOW); the public API (include/tca, "tca/...") may be included everywhere. Prints
every include that points up or sideways as FILE:LINE -> TARGET and exits 1 when there is one,
0 otherwise.

usage: check_layers.py [ROOT]   (default: the tree this script is in)
"""
import os
import re
import sys

# The layers from the bottom up, each with the folders it may include (besides its own).
LAYERS_BELOW = {
    "base": set(),  # the ground floor: error, log, settings, records, host memory...
    "tuning": {"base"},  # every choice by size
    "bootstrap": {"base"},  # how ranks find each other
    "domain": {"base"},  # memory domains
    "transport": {"base", "tuning", "bootstrap", "domain"},  # transports, the Job they see
    "core": {"base", "tuning", "bootstrap", "domain", "transport"},  # the context and the C API
    "coll": {"base", "tuning", "core"},  # collectives, on the C API and the core
}
PUBLIC_API = "tca"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SUFFIXES = (".c", ".cc", ".h", ".cu", ".cuh")


def check_acyclic():
    """The declared layers must form no cycle (else "down" would mean nothing)."""
    done, visiting = set(), set()

    def visit(layer, path):
        if layer in visiting:
            sys.exit("check_layers.py: the declared layers form a cycle: " + " -> ".join(path))
        if layer in done:
            return
        visiting.add(layer)
        for below in sorted(LAYERS_BELOW[layer]):
            visit(below, path + [below])
        visiting.discard(layer)
        done.add(layer)

    for layer in LAYERS_BELOW:
        visit(layer, [layer])


def target_folder(src, including_dir, target):
    """The src/ folder an include names, PUBLIC_API for the public headers, or None."""
    first = target.split("/")[0]
    if first == PUBLIC_API or first in LAYERS_BELOW:
        return first
    beside = os.path.normpath(os.path.join(including_dir, target))  # a relative include
    if os.path.isfile(beside) and beside.startswith(src + os.sep):
        return os.path.relpath(beside, src).split(os.sep)[0]
    return None


def violations(root):
    src = os.path.join(root, "src")
    found = []
    for folder, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(SUFFIXES):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            layer = os.path.relpath(path, src).split(os.sep)[0]
            if layer not in LAYERS_BELOW:
                found.append(f"{relative}: folder src/{layer} is not a declared layer")
                continue
            with open(path, encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, 1):
                    match = INCLUDE.match(line)
                    if match is None:
                        continue
                    target = match.group(1)
                    folder_of_target = target_folder(src, folder, target)
                    if folder_of_target in (layer, PUBLIC_API):
                        continue
                    if folder_of_target not in LAYERS_BELOW.get(layer, set()):
                        found.append(f"{relative}:{number} -> {target}")
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    check_acyclic()
    found = violations(root)
    for entry in found:
        print(entry)
    if found:
        print(f"{len(found)} includes point up or sideways between folders of src/ "
              "(scripts/check_layers.py declares the layers)", file=sys.stderr)
        return 1
    print(f"src/ layers: every #include between folders points down ({len(LAYERS_BELOW)} "
          "layers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
