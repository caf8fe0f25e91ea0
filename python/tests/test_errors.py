# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Every bad input raises the matching exception and changes nothing.
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tca


def test_exception_classes():
    assert issubclass(tca.OutOfBoundsError, tca.TcaError)
    assert tca.OutOfBoundsError.code == 6
    assert issubclass(tca.TimeoutError, TimeoutError)
    assert issubclass(tca.InvalidArgumentError, ValueError)


def test_unregistered_object_in_chain():
    a = np.zeros(8, np.uint8)
    r = tca.register(a)
    with tca.Chain() as chain:
        with pytest.raises(tca.InvalidArgumentError, match="register"):
            chain.memcpy(np.zeros(8, np.uint8), 0, r, 0, 8)
    with pytest.raises(tca.InvalidArgumentError):
        tca.register(object())
    r.close()


def test_non_contiguous_array():
    with pytest.raises(tca.InvalidArgumentError, match="contiguous"):
        tca.register(np.zeros((8, 8))[:, 1])
    with pytest.raises(tca.InvalidArgumentError, match="contiguous"):
        tca.allreduce(np.zeros((8, 8))[::2])


def test_read_only_destination(ranks):
    rank, _ = ranks
    src = np.arange(8, dtype=np.uint8)
    ro = np.zeros(8, np.uint8)
    ro.setflags(write=False)
    rs = tca.register(src)
    with pytest.raises(tca.InvalidArgumentError, match="read-only"):
        tca.get(ro, rs.handle, 0)
    rro = tca.register(ro)
    assert rro.readonly
    with tca.Chain() as chain:
        with pytest.raises(tca.InvalidArgumentError, match="read-only"):
            chain.memcpy(rro, 0, rs, 0, 8)
    with pytest.raises(tca.InvalidArgumentError, match="read-only"):
        tca.put(rro.handle, 0, src)
    with pytest.raises(tca.InvalidArgumentError, match="read-only"):
        tca.allreduce(src.astype(np.int32), np.frombuffer(bytes(32), np.int32))
    assert not ro.any()
    rro.close()
    rs.close()


def test_wrong_dtype_for_op():
    with pytest.raises(tca.InvalidArgumentError, match="dtype"):
        tca.allreduce(np.zeros(4, np.int8))
    with pytest.raises(tca.InvalidArgumentError, match="dtype"):
        tca.allreduce(np.zeros(4, np.float16))
    with pytest.raises(tca.InvalidArgumentError, match="dtype"):
        tca.allreduce(np.zeros(4, np.float32), np.zeros(4, np.float64))
    with pytest.raises(tca.InvalidArgumentError, match="op"):
        tca.allreduce(np.zeros(4, np.float32), op="prod")


def test_out_of_range_offsets(ranks):
    rank, size = ranks
    dst = np.zeros(16, np.uint8)
    src = np.full(16, 9, np.uint8)
    rd, rs = tca.register(dst), tca.register(src)
    peers = tca.allgather_handles(rd)
    nxt = (rank + 1) % size
    with tca.Chain() as chain:
        with pytest.raises(tca.OutOfBoundsError):
            chain.memcpy(peers[nxt], 8, rs, 0, 16)
        with pytest.raises(tca.OutOfBoundsError):
            chain.memcpy(rd, 0, rs, 17, 1)
        with pytest.raises(tca.OutOfBoundsError):
            chain.memcpy(rd, -1, rs, 0, 1)
        with pytest.raises((tca.OutOfBoundsError, tca.SizeOverflowError)):
            chain.memcpy(rd, 2**64 - 4, rs, 0, 8)
        with pytest.raises(tca.OutOfBoundsError):
            chain.memcpy_2d(rd, 0, 8, rs, 0, 8, 8, 3)
    with pytest.raises(tca.OutOfBoundsError):
        tca.put(peers[nxt], 12, src)
    with pytest.raises(tca.OutOfBoundsError):
        tca.get(np.zeros(4, np.uint8), peers[nxt], 13)
    tca.barrier()
    assert not dst.any()  # nothing arrived from any of them
    with pytest.raises(tca.InvalidSlotError):
        tca.Chain().memcpy(rd, 0, rs, 0, 1, notify=tca.USER_NOTIFY_SLOTS)
    with pytest.raises(tca.InvalidChannelError):
        tca.Chain().memcpy(rd, 0, rs, 0, 1).bind(tca.USER_DMA_CHANNELS)
    with pytest.raises(tca.InvalidRankError):
        tca.notify(size, 0)
    rd.close()
    rs.close()
    tca.barrier()


def test_corrupted_and_foreign_handles():
    a = np.zeros(8, np.uint8)
    r = tca.register(a)
    bad = bytearray(bytes(r.handle))
    bad[40] ^= 0xFF
    with pytest.raises(tca.InvalidHandleError):
        tca.Handle.from_bytes(bytes(bad)).info()
    with pytest.raises(tca.InvalidHandleError):
        tca.Handle.from_bytes(b"short")
    # A handle made by another job: a process of its own, started alone.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TCA_", "OMPI_", "PMIX_", "PMI_", "MASTER_", "RANK", "WORLD_SIZE",
                                "LOCAL_RANK", "PRTE_"))}
    env["TCA_BOOTSTRAP"] = "single"
    code = ("import tca, numpy as np, sys; tca.init(); a = np.zeros(8, np.uint8); "
            "sys.stdout.write(bytes(tca.register(a).handle).hex())")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True, timeout=60).stdout
    foreign = tca.Handle.from_bytes(bytes.fromhex(out))
    with pytest.raises(tca.ForeignHandleError):
        foreign.info()
    with tca.Chain() as chain:
        with pytest.raises(tca.ForeignHandleError):
            chain.memcpy(foreign, 0, r, 0, 8)
    r.close()


def test_use_after_close():
    a = np.arange(8, dtype=np.uint8)
    b = np.zeros(8, np.uint8)
    ra, rb = tca.register(a), tca.register(b)
    rb.close()
    with pytest.raises(tca.FreedHandleError):
        rb.close()
    with tca.Chain() as chain:
        with pytest.raises(tca.FreedHandleError):
            chain.memcpy(rb, 0, ra, 0, 8)
    chain = tca.Chain()
    chain.close()
    with pytest.raises(tca.InvalidDescError):
        chain.kick()
    with pytest.raises(tca.InvalidDescError):
        chain.memcpy(ra, 0, ra, 0, 8)
    buf = tca.malloc(64)
    buf.free()
    with pytest.raises(tca.FreedHandleError):
        tca.register(buf)
    assert not b.any()
    ra.close()


def test_finalize_twice_and_init_twice():
    with pytest.raises(tca.AlreadyInitializedError):
        tca.init()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TCA_", "OMPI_", "PMIX_", "PMI_", "MASTER_", "RANK", "WORLD_SIZE",
                                "LOCAL_RANK", "PRTE_"))}
    env["TCA_BOOTSTRAP"] = "single"
    code = ("import tca\n"
            "with tca.init():\n    assert tca.size() == 1\n"
            "try:\n    tca.finalize()\nexcept tca.NotInitializedError as e:\n    print('ok', e)\n"
            "try:\n    tca.rank()\nexcept tca.NotInitializedError:\n    print('ok2')\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True, timeout=60).stdout
    assert out.startswith("ok tca is not initialized") and "ok2" in out


def test_wait_interrupted_by_ctrl_c():
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    # The timer starts inside the block: on a loaded machine the signal may come before the wait
    # does, and a KeyboardInterrupt outside the block would end the whole pytest session on this
    # rank (its finalize then waits for ranks still running tests).
    with pytest.raises(KeyboardInterrupt):
        timer.start()
        tca.wait_notify(tca.rank(), 31)  # nobody notifies slot 31
    assert time.monotonic() - start < 2.0
    timer.join()


def test_wait_timeout():
    old = tca.get_timeout()
    tca.set_timeout(100)
    try:
        with pytest.raises(tca.TimeoutError):
            tca.wait_notify(tca.rank(), 30)
    finally:
        tca.set_timeout(old)
