# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# The examples of python/examples, run inside the suite's tca job.
import importlib.util
import pathlib

import pytest

import tca

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"tca_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def have_gpu():
    try:
        import torch
    except ImportError:
        return False
    return tca.HAS_CUDA and torch.cuda.is_available()


def have_torch():
    return importlib.util.find_spec("torch") is not None


def test_ring():
    load("ring").main(iterations=3)


def test_halo_2d_cpu():
    load("halo_2d").main(gpu=False)


@pytest.mark.skipif(not have_gpu(), reason="needs PyTorch with a GPU")
def test_halo_2d_gpu():
    load("halo_2d").main(gpu=True)


@pytest.mark.skipif(not have_gpu(), reason="needs PyTorch with a GPU")
def test_graph_allreduce():
    load("graph_allreduce").main()


@pytest.mark.skipif(not have_torch(), reason="needs PyTorch (torch.distributed's store)")
def test_store_handles():
    load("store_handles").main()
