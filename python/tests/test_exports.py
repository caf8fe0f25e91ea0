# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# libtca and the extension export no part of the C++ runtime. A toolchain that links libstdc++ in
# as an archive (the GPU machine's) would otherwise put its std::locale before libstdc++.so's for
# every library loaded later in the process: `import tca` then `import torch` aborted in free().
import importlib.util
import shutil
import subprocess
import sys

import pytest

import tca

RUNTIME = ("_ZNSt6locale", "_ZNKSt6locale", "_ZNSt8ios_base", "_ZSt4cout", "_ZSt4cerr",
           "__cxa_", "__gxx_personality", "_ZSt9terminate", "_ZNSt6thread")


def loaded(name):
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if name in line and "/" in line}
    return sorted(paths)


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("nm") is None,
                    reason="needs Linux and nm")
def test_no_cxx_runtime_exported():
    objects = loaded("libtca.so") + loaded("/_tca.")
    assert any("libtca.so" in p for p in objects) and any("/_tca." in p for p in objects), objects
    for path in objects:
        out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                             capture_output=True, text=True).stdout
        leaked = [line.split()[-1] for line in out.splitlines()
                  if line.split() and line.split()[-1].startswith(RUNTIME)]
        assert not leaked, f"{path} exports the C++ runtime: {leaked[:5]}"
    assert tca.version()


@pytest.mark.parametrize("module", ["torch", "jax"])
def test_cxx_library_imported_after_tca(module):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {module}")
    code = f"import tca, {module}; print({module}.__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
