# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Arrays of JAX and CuPy registered as they are: a JAX array (immutable: the buffer protocol's
# read-only view) as the source of a chain, a put and an allreduce, and refused as a destination;
# a JAX GPU array (memory CUDA IPC cannot export: registered as a staged read-only copy) as the
# source of a chain, a put and allreduces, byte-exact; CuPy arrays registered and reduced. Each
# case is skipped, with the reason, where its library (or a GPU) is missing.
import os

import numpy as np
import pytest

import tca

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX takes GPU memory as used


def _jax():
    return pytest.importorskip("jax", reason="needs JAX (pip install jax)")


def _jax_gpu(jax):
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not (tca.HAS_CUDA and gpus):
        pytest.skip("needs a CUDA build of tca and JAX with a GPU")
    return gpus[tca.cuda_device() % len(gpus)]


def _ring(rank, size):
    return (rank + 1) % size, (rank - 1) % size


def test_jax_cpu_array_as_source(ranks):
    jax = _jax()
    rank, size = ranks
    nxt, prv = _ring(rank, size)
    x = jax.device_put(np.arange(64, dtype=np.float32) + 100 * rank, jax.devices("cpu")[0])
    recv = np.zeros(64, np.float32)
    with tca.register(x) as rx, tca.register(recv) as rr:
        assert rx.kind == "cpu" and rx.nbytes == 256 and rx.obj is x
        peers = tca.allgather_handles(rr)
        with tca.Chain() as chain:
            chain.memcpy(peers[nxt], 0, rx, 0, 256, notify=6).bind(1)
            chain.kick()
            tca.wait_dma(1)
            assert tca.wait_notify(prv, 6) == prv
        np.testing.assert_array_equal(recv, np.arange(64, dtype=np.float32) + 100 * prv)
        tca.barrier()
        tca.put(peers[nxt], 128, x[:8])  # a slice of a JAX array is an array too
        tca.barrier()
        np.testing.assert_array_equal(recv[32:40], np.arange(8, dtype=np.float32) + 100 * prv)
        if rx.readonly:  # the buffer protocol's view says read-only: never a destination
            with tca.Chain() as chain, pytest.raises(tca.InvalidArgumentError, match="read-only"):
                chain.memcpy(rx, 0, rr, 0, 4)
        with pytest.raises(tca.InvalidArgumentError, match="read-only|immutable"):
            tca.get(x, peers[nxt], 0)
        tca.barrier()


def test_jax_cpu_allreduce(ranks):
    jax = _jax()
    rank, size = ranks
    send = jax.device_put(np.full(16, rank + 1, np.float32), jax.devices("cpu")[0])
    out = tca.allreduce(send, np.zeros(16, np.float32))  # JAX: 32-bit by default
    np.testing.assert_array_equal(out, np.full(16, size * (size + 1) / 2))
    with pytest.raises(tca.InvalidArgumentError, match="immutable"):
        tca.allreduce(send)


def test_jax_gpu_array_as_source(ranks):
    jax = _jax()
    device = _jax_gpu(jax)
    rank, size = ranks
    nxt, prv = _ring(rank, size)
    x = jax.device_put(np.arange(1024, dtype=np.int32) * (rank + 1), device)
    mine = np.arange(1024, dtype=np.int32) * (rank + 1)
    dst = tca.malloc(4096, "gpu")
    rx = tca.register(x)
    # JAX's GPU memory is not what CUDA IPC exports: tca registers a read-only copy of it.
    assert rx.kind == "gpu" and rx.nbytes == 4096 and rx.readonly and rx.obj is x
    assert rx.staged == (rx.ptr != x.unsafe_buffer_pointer())
    with rx, tca.register(dst) as rd:
        peers = tca.allgather_handles(rd)
        with tca.Chain() as chain:
            chain.memcpy(peers[nxt], 0, rx, 0, 4096, notify=7).bind(1)
            chain.kick()
            tca.wait_dma(1)
            assert tca.wait_notify(prv, 7) == prv
        tca.barrier()
        got = np.zeros(1024, np.int32)
        tca.get(got, peers[nxt], 0)  # nxt's dst holds this rank's x, byte for byte
        np.testing.assert_array_equal(got, mine)
        tca.barrier()
        tca.put(peers[nxt], 0, x[512:])  # a JAX GPU array (a slice) as a put's source
        tca.barrier()
        tca.get(got, peers[nxt], 0)
        np.testing.assert_array_equal(got[:512], mine[512:])
        np.testing.assert_array_equal(got[512:], mine[512:])
        with tca.Chain() as chain, pytest.raises(tca.InvalidArgumentError, match="read-only"):
            chain.memcpy(rx, 0, rd, 0, 4)
        with pytest.raises(tca.InvalidArgumentError, match="read-only"):
            tca.put(rx, 0, np.zeros(4, np.uint8))
        with pytest.raises(tca.InvalidArgumentError, match="immutable"):
            tca.get(x, peers[nxt], 0)
        tca.barrier()
    assert rx.closed and rx._stage is None
    with pytest.raises(tca.FreedHandleError):
        rx.close()
    dst.free()


def test_jax_gpu_allreduce(ranks):
    jax = _jax()
    device = _jax_gpu(jax)
    cupy = pytest.importorskip("cupy", reason="needs CuPy for the GPU result")
    rank, size = ranks
    x = jax.device_put(np.arange(1000, dtype=np.int32) * (rank + 1), device)
    want = np.arange(1000, dtype=np.int32) * (size * (size + 1) // 2)
    with cupy.cuda.Device(tca.cuda_device()):
        recv = cupy.zeros(1000, cupy.int32)
        tca.allreduce(x, recv)  # one-shot: tca copies send into its own buffer
        np.testing.assert_array_equal(cupy.asnumpy(recv), want)
        with tca.Collective("allreduce", x, recv, op="max") as coll:  # registers send: staged
            recv.fill(0)
            coll()
            np.testing.assert_array_equal(cupy.asnumpy(recv), np.arange(1000) * size)
        stream = cupy.cuda.Stream()
        recv.fill(0)
        tca.allreduce(x, recv, stream=stream)  # stream-ordered, cached persistent collective
        stream.synchronize()
        np.testing.assert_array_equal(cupy.asnumpy(recv), want)
        tca.release_cache()


def test_cupy_register_and_allreduce(ranks):
    cupy = pytest.importorskip("cupy", reason="needs CuPy")
    try:
        gpus = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        gpus = 0
    if not (tca.HAS_CUDA and gpus):
        pytest.skip("needs a CUDA build of tca and a GPU")
    rank, size = ranks
    with cupy.cuda.Device(tca.cuda_device()):
        send = cupy.arange(257, dtype=cupy.int64) * (rank + 1)
        with tca.register(send) as region:
            assert region.kind == "gpu" and region.nbytes == 257 * 8
        out = tca.allreduce(send, op="max")
        assert isinstance(out, cupy.ndarray)
        np.testing.assert_array_equal(cupy.asnumpy(out), np.arange(257) * size)
        with pytest.raises(tca.InvalidArgumentError, match="contiguous"):
            tca.register(cupy.zeros((4, 4), cupy.float32)[:, 1])
