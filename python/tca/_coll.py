# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""Collectives on arrays (tca_coll.h, tca_coll_cuda.h): one-shot and persistent."""
from dataclasses import replace

from . import _tca
from ._buffers import CPU, GPU, buffer_info, immutable, stream_handle, writable_info
from ._core import _live, exportable, stage_copy
from ._errors import InvalidArgumentError

DTYPES = {"i4": 0, "i8": 1, "f4": 2, "f8": 3}
OPS = {"sum": 0, "max": 1, "min": 2}
ALGORITHMS = {"auto": 0, "ring": 1, "neighbor_exchange": 2, "recursive_doubling": 3,
              "dissemination": 4, "direct": 5}
_ALLGATHER, _ALLREDUCE = 0, 1


def _choice(table, value, what):
    if value not in table:
        raise InvalidArgumentError(f"{what} must be one of {sorted(table)}, not {value!r}")
    return table[value]


def _dtype(info, what):
    if info.dtype not in DTYPES:
        raise InvalidArgumentError(
            f"{what}: dtype {info.dtype} is not supported (int32, int64, float32, float64)")
    return DTYPES[info.dtype]


def _like(send):
    """A new array of send's shape and dtype on send's device (NumPy, torch, CuPy)."""
    mod = type(send).__module__.split(".")[0]
    if mod == "torch":
        import torch
        return torch.empty_like(send)
    if mod == "cupy":
        import cupy
        return cupy.empty_like(send)
    if mod == "jax" or mod == "jaxlib":
        raise InvalidArgumentError("JAX arrays are immutable: pass recv")
    import numpy as np
    return np.empty_like(np.asarray(send))


def _check_pair(send, recv, per_rank_factor, what):
    s = buffer_info(send)
    r = writable_info(recv, f"{what} recv")
    t = _dtype(s, what)
    if r.dtype != s.dtype:
        raise InvalidArgumentError(f"{what}: recv's dtype {r.dtype} differs from send's {s.dtype}")
    if r.kind != s.kind:
        raise InvalidArgumentError(f"{what}: send and recv are in different memory kinds")
    itemsize = int(s.dtype[1:])
    count = s.nbytes // itemsize
    if r.nbytes != s.nbytes * per_rank_factor:
        raise InvalidArgumentError(
            f"{what}: recv holds {r.nbytes} bytes, needs {s.nbytes * per_rank_factor}")
    return s, r, t, count


def _source(send, s):
    """(stage, info) of what a persistent collective registers as its send: a staged copy (a
    tca Buffer, the caller frees it) of an immutable GPU array that CUDA IPC cannot export
    (JAX), else (None, s)."""
    if s.kind == GPU and immutable(send) and not exportable(s):
        stage = stage_copy(send, s)
        return stage, replace(s, ptr=stage.ptr)
    return None, s


def allreduce(send, recv=None, op="sum", stream=None, algorithm="auto"):
    """recv[i] = op over ranks of send[i] (collective); returns recv, a new array like send
    where None; in place where recv is send. dtypes int32, int64, float32, float64; op "sum",
    "max", "min". GPU arrays with ``stream``: stream-ordered (a cached persistent collective per
    buffer pair, capturable once made: call it once outside the capture first)."""
    if recv is None:
        recv = _like(send)
    s, r, t, count = _check_pair(send, recv, 1, "allreduce")
    o = _choice(OPS, op, "op")
    a = _choice(ALGORITHMS, algorithm, "algorithm")
    if stream is not None:
        if s.kind != GPU:
            raise InvalidArgumentError("allreduce: stream= needs GPU arrays")
        _cached(_ALLREDUCE, t, o, count, send, s, r, a).start_on(stream)
    else:
        _tca.allreduce(s.ptr, r.ptr, count, t, o, a, s.kind)  # copies send in: no registration
    return recv


def allgather(send, recv, stream=None, algorithm="auto"):
    """recv holds size() blocks of send, rank r's at block r (collective); returns recv."""
    s, r, t, count = _check_pair(send, recv, _tca.size(), "allgather")
    a = _choice(ALGORITHMS, algorithm, "algorithm")
    if stream is not None:
        if s.kind != GPU:
            raise InvalidArgumentError("allgather: stream= needs GPU arrays")
        _cached(_ALLGATHER, t, 0, count, send, s, r, a).start_on(stream)
    else:
        _tca.allgather(s.ptr, r.ptr, count, t, a, s.kind)
    return recv


_cache = {}


def _cached(kind, t, o, count, send, s, r, a):
    # An immutable GPU send may be staged (a copy): its entry is the array's own and keeps it
    # alive, so that a later array at the same address never meets an old copy.
    own = s.kind == GPU and immutable(send)
    key = (kind, t, o, count, s.ptr, r.ptr, a, s.kind, id(send) if own else None)
    coll = _cache.get(key)
    if coll is None or coll.closed:
        coll = Collective._from_infos(kind, t, o, count, send, s, r, a)
        if own:
            coll.send = send
        _cache[key] = coll
    return coll


class Collective:
    """A persistent allreduce or allgather made once for a pair of buffers (collective):
    ``start()``/``wait()`` per iteration, or ``start_on(stream)`` on GPU buffers (capturable in
    torch.cuda.graph / CuPy graphs: every replay runs one iteration). ``kind``: "allreduce" or
    "allgather". Keeps send and recv alive; ``close()`` frees it (collective). A JAX GPU send
    (memory CUDA IPC cannot export) is copied once into tca-owned GPU memory, freed at close:
    every iteration reduces that copy, which equals the immutable array."""

    def __init__(self, kind, send, recv, op="sum", algorithm="auto", resident_idle_us=0):
        k = _choice({"allgather": _ALLGATHER, "allreduce": _ALLREDUCE}, kind, "kind")
        factor = _tca.size() if k == _ALLGATHER else 1
        s, r, t, count = _check_pair(send, recv, factor, kind)
        o, a = _choice(OPS, op, "op"), _choice(ALGORITHMS, algorithm, "algorithm")
        self._setup(k, t, o, count, send, s, r, a, resident_idle_us)
        self.send, self.recv = send, recv

    @classmethod
    def _from_infos(cls, k, t, o, count, send, s, r, a):
        self = cls.__new__(cls)
        self._setup(k, t, o, count, send, s, r, a, 0)
        self.send = self.recv = None
        return self

    def _setup(self, k, t, o, count, send, s, r, a, resident_idle_us):
        self._c = 0
        self._stage, s = _source(send, s)
        try:
            self._c = _tca.coll_new(k, t, o, count, s.ptr, r.ptr, a, s.kind, resident_idle_us)
        except BaseException:
            if self._stage is not None:
                self._stage.free()
            raise
        self.kind = "gpu" if s.kind == GPU else "cpu"
        _live.add(self)

    def _coll(self):
        if not self._c:
            raise InvalidArgumentError("the collective is closed")
        return self._c

    @property
    def closed(self):
        return not self._c

    @property
    def algorithm(self):
        """The algorithm it runs ("ring", "direct", ...)."""
        return _tca.coll_algorithm(self._coll())

    def start(self):
        """Begins an iteration: send holds its data; recv is the collective's until wait()."""
        _tca.coll_start(self._coll())

    def test(self):
        """Advances the iteration; True once complete."""
        return _tca.coll_test(self._coll())

    def wait(self):
        """Completes the iteration (without the GIL; Ctrl-C raises KeyboardInterrupt)."""
        _tca.coll_wait(self._coll())

    def __call__(self):
        self.start()
        self.wait()
        return self.recv

    def start_on(self, stream):
        """Enqueues one iteration on a CUDA stream (GPU buffers; capturable)."""
        _tca.coll_start_stream(self._coll(), stream_handle(stream))

    def close(self):
        """Frees the collective (collective: every rank closes it)."""
        c, self._c = self._coll(), 0
        _live.discard(self)
        stage, self._stage = self._stage, None
        try:
            _tca.coll_free(c)
        finally:
            if stage is not None:
                stage.free()

    def _invalidate(self):
        self._c = 0  # tcaFinalize releases what is left
        self._stage = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._c:
            self.close()
        return False


def release_cache():
    """Collective: frees what the one-shot calls keep."""
    for coll in _cache.values():
        if not coll.closed:
            coll.close()
    _cache.clear()
    _tca.coll_release_cache()


def choose_algorithm(kind, nbytes, ranks, memory="cpu"):
    """What algorithm="auto" runs for ``nbytes`` of result on ``ranks`` ranks."""
    k = _choice({"allgather": _ALLGATHER, "allreduce": _ALLREDUCE}, kind, "kind")
    return _tca.coll_choose(k, GPU if memory == "gpu" else CPU, nbytes, ranks)
