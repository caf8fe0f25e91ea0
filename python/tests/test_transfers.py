# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Transfers between ranks on NumPy arrays: chains, block-stride, put/get, PIO, notifications.
import numpy as np
import pytest

import tca


def test_job(ranks):
    rank, size = ranks
    assert 0 <= rank < size
    name, reason = tca.bootstrap_info()
    assert name in ("mpi", "pmix", "tcp", "single") and reason
    assert tca.version() == tuple(int(x) for x in tca.__version__.split("."))
    tca.barrier()


def test_handle_bytes_roundtrip(ranks):
    rank, size = ranks
    buf = np.zeros(100, np.int32)
    with tca.register(buf) as region:
        h = region.handle
        assert len(bytes(h)) == tca.HANDLE_BYTES
        assert tca.Handle.from_bytes(bytes(h)) == h
        assert h.info() == (rank, 400, "cpu")
        handles = tca.allgather_handles(region)
        assert [x.owner for x in handles] == list(range(size))
        assert all(x.nbytes == 400 for x in handles)
        tca.barrier()


def test_ring_chain_notify(ranks):
    rank, size = ranks
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    send = np.arange(1000, dtype=np.float64) + 1000 * rank
    recv = np.zeros(1000, np.float64)
    with tca.register(send) as rs, tca.register(recv) as rr:
        peers = tca.allgather_handles(rr)
        with tca.Chain() as chain:
            chain.memcpy(peers[nxt], 0, rs, 0, send.nbytes, notify=3).bind(0)
            for it in range(5):
                send[:] = np.arange(1000) + 1000 * rank + it
                chain.kick()
                tca.wait_dma(0)
                assert tca.wait_notify(prv, 3) == prv
                np.testing.assert_array_equal(recv, np.arange(1000) + 1000 * prv + it)
                tca.barrier()  # recv is rewritten next iteration


def test_memcpy_2d_block_stride(ranks):
    rank, size = ranks
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    src = (np.arange(8 * 16, dtype=np.uint8).reshape(8, 16) + rank).astype(np.uint8)
    dst = np.full((8, 16), 255, np.uint8)
    with tca.register(src) as rs, tca.register(dst) as rd:
        peers = tca.allgather_handles(rd)
        with tca.Chain() as chain:
            # column block 2..5 of every other row of src into column 8..11 of dst's rows 0..3
            chain.memcpy_2d(peers[nxt], 8, 16, rs, 2, 32, 4, 4, notify=1).bind(1)
            chain.kick()
            tca.wait_dma(1)
            assert tca.wait_notify(tca.ANY_RANK, 1) == prv
    expect = np.full((8, 16), 255, np.uint8)
    mine = (np.arange(8 * 16).reshape(8, 16) + prv).astype(np.uint8)
    expect[0:4, 8:12] = mine[0::2, 2:6]
    np.testing.assert_array_equal(dst, expect)
    tca.barrier()


def test_put_get(ranks):
    rank, size = ranks
    nxt = (rank + 1) % size
    area = np.zeros(64, np.int64)
    with tca.register(area) as region:
        peers = tca.allgather_handles(region)
        tca.put(peers[nxt], 8 * 8, np.full(4, rank + 7, np.int64))
        tca.barrier()
        prv = (rank - 1) % size
        np.testing.assert_array_equal(area[8:12], np.full(4, prv + 7))
        got = np.zeros(4, np.int64)
        assert tca.get(got, peers[nxt], 8 * 8) is got
        np.testing.assert_array_equal(got, np.full(4, rank + 7))
        tca.barrier()


def test_pio_view_and_notify(ranks):
    rank, size = ranks
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    buf = tca.malloc(4096, "cpu")
    area = np.asarray(buf)
    area[:] = 0
    with tca.register(buf) as region:
        peers = tca.allgather_handles(region)
        try:
            view = tca.pio_view(peers[nxt], 128, 16)
        except tca.UnsupportedError:
            pytest.skip("the peer's host memory is not mapped here (no shm between these ranks)")
        view[:] = np.arange(16, dtype=np.uint8) + rank
        tca.pio_fence()
        tca.notify(nxt, 5)
        assert tca.wait_notify(prv, 5) == prv
        np.testing.assert_array_equal(area[128:144], np.arange(16, dtype=np.uint8) + prv)
        assert tca.test_notify(prv, 5) is None
        tca.barrier()
    buf.free()


def test_malloc_buffer_is_numpy_viewable():
    buf = tca.malloc(256)
    arr = np.asarray(buf)
    assert arr.shape == (256,) and arr.dtype == np.uint8
    arr[:] = 7
    assert np.asarray(buf)[100] == 7
    buf.free()


def test_chain_path_named(ranks):
    rank, size = ranks
    a = np.arange(32, dtype=np.uint8)
    b = np.zeros(32, np.uint8)
    ra, rb = tca.register(a), tca.register(b)
    path = "shm" if tca.path_available("shm", rank) else "auto"
    with tca.Chain(path=path) as chain:
        chain.memcpy(rb, 0, ra, 0, 32).bind(2)
        chain.kick()
        tca.wait_dma(2)
    np.testing.assert_array_equal(a, b)
    rb.close()
    ra.close()


class DLPackOnly:
    """An array that speaks DLPack alone (as torch CPU tensors and JAX arrays do)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_only_object(ranks):
    rank, size = ranks
    base = np.zeros(64, np.int32)
    obj = DLPackOnly(base)
    with tca.register(obj) as region:
        assert region.nbytes == 256 and region.kind == "cpu"
        peers = tca.allgather_handles(region)
        tca.put(peers[(rank + 1) % size], 16, DLPackOnly(np.full(4, rank, np.int32)))
        tca.barrier()
        np.testing.assert_array_equal(base[4:8], np.full(4, (rank - 1) % size))
        tca.barrier()
    out = tca.allreduce(DLPackOnly(np.ones(8, np.float64)), np.zeros(8))
    np.testing.assert_array_equal(out, np.full(8, size))
