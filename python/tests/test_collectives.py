# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Collectives on NumPy arrays against NumPy's own reductions.
import numpy as np
import pytest

import tca


def contribution(rank, n, dtype):
    return ((np.arange(n) * (rank + 3)) % 97 - 40).astype(dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_allreduce_matches_numpy(ranks, dtype, op):
    rank, size = ranks
    n = 1000
    send = contribution(rank, n, dtype)
    all_ = np.stack([contribution(r, n, dtype) for r in range(size)])
    expect = {"sum": all_.sum(0), "max": all_.max(0), "min": all_.min(0)}[op].astype(dtype)
    out = tca.allreduce(send, op=op)
    assert out.dtype == send.dtype and out.shape == send.shape
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("algorithm", ["ring", "recursive_doubling", "dissemination", "direct"])
def test_allreduce_algorithms_in_place(ranks, algorithm):
    rank, size = ranks
    x = np.full((4, 33), rank + 1, np.float64)
    assert tca.allreduce(x, x, algorithm=algorithm) is x
    np.testing.assert_array_equal(x, np.full((4, 33), size * (size + 1) / 2))


def test_allgather(ranks):
    rank, size = ranks
    send = np.full(10, rank, np.int64)
    recv = np.zeros(10 * size, np.int64)
    tca.allgather(send, recv)
    np.testing.assert_array_equal(recv, np.repeat(np.arange(size), 10))


def test_persistent_collective(ranks):
    rank, size = ranks
    send = np.zeros(257, np.float32)
    recv = np.zeros(257, np.float32)
    with tca.Collective("allreduce", send, recv, op="sum") as coll:
        assert coll.algorithm
        for it in range(4):
            send[:] = rank + it
            coll.start()
            coll.wait()
            np.testing.assert_array_equal(recv, np.full(257, sum(range(size)) + size * it))
        send[:] = 1
        assert coll() is recv
        np.testing.assert_array_equal(recv, np.full(257, size))


def test_persistent_allgather(ranks):
    rank, size = ranks
    send = np.full(3, rank * 2, np.int32)
    recv = np.zeros(3 * size, np.int32)
    with tca.Collective("allgather", send, recv) as coll:
        coll.start()
        while not coll.test():
            pass
    np.testing.assert_array_equal(recv, np.repeat(np.arange(size) * 2, 3))
