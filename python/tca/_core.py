# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""Lifecycle, memory, regions, handles, chains and immediate transfers (tca.h)."""
import weakref
from dataclasses import replace

from . import _tca
from ._buffers import CPU, GPU, buffer_info, immutable, stream_handle, writable_info
from ._errors import (InvalidArgumentError, InvalidDescError, NotInitializedError,
                      OutOfBoundsError, FreedHandleError, TransportError)

ANY_RANK = _tca.ANY_RANK
HANDLE_BYTES = _tca.HANDLE_BYTES
USER_NOTIFY_SLOTS = _tca.USER_NOTIFY_SLOTS
USER_DMA_CHANNELS = _tca.USER_DMA_CHANNELS
_KINDS = {"cpu": CPU, "gpu": GPU}
PATHS = {"auto": 0, "shm": 1, "mpi": 2, "cuda": 3, "cuda_ce": 4, "cuda_sm": 5,
         "cuda_resident": 6, "ucx": 7}

# Objects that hold tca resources; finalize closes them first.
_live = weakref.WeakSet()


def _count(value, what):
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidArgumentError(f"{what} must be an int, not {type(value).__name__}")
    if value < 0:
        raise OutOfBoundsError(f"{what} {value} is negative")
    return value


class Session:
    """What tca.init returns: a context manager whose exit calls tca.finalize."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        finalize()
        return False


def init(transport=None, timeout_ms=None):
    """Starts tca (collective). The bootstrap follows TCA_BOOTSTRAP: MPI where the program
    initialized MPI (mpi4py) or mpirun started it, else torchrun's or tca-run's variables, else a
    job of one rank. ``transport``: "auto" or a transport that AUTO then prefers ("shm", "mpi",
    "cuda", "ucx"); None: $TCA_TRANSPORT. ``timeout_ms``: how long waits wait; None:
    $TCA_TIMEOUT_MS, else 60000. Returns a Session (``with tca.init(): ...`` finalizes)."""
    if timeout_ms is not None and (not isinstance(timeout_ms, int) or timeout_ms <= 0):
        raise InvalidArgumentError(f"timeout_ms must be a positive int, not {timeout_ms!r}")
    _tca.init(transport, timeout_ms or 0)
    return Session()


def finalize():
    """Ends tca (collective): closes this process's chains and regions, then finalizes.
    A second call raises NotInitializedError."""
    _tca.rank()  # NotInitializedError before anything is touched
    for obj in list(_live):
        obj._invalidate()
    _live.clear()
    _tca.finalize()


def rank():
    """This process's rank."""
    return _tca.rank()


def size():
    """The number of ranks."""
    return _tca.size()


def barrier():
    """Waits for every rank (collective; for set-up, not for ordering data)."""
    _tca.barrier()


def set_timeout(timeout_ms):
    """Sets how long waits wait (milliseconds)."""
    _tca.set_timeout(timeout_ms)


def get_timeout():
    """The timeout waits use now (milliseconds)."""
    return _tca.get_timeout()


def bootstrap_info():
    """(name, reason): the bootstrap that started the job ("mpi", "pmix", "tcp", "single") and why."""
    return _tca.bootstrap_info()


def version():
    """The library's release as (major, minor, patch)."""
    return _tca.version()


class Handle:
    """A registered region as 512 bytes that can travel through any channel:
    ``bytes(h)`` and ``Handle.from_bytes(b)``."""

    __slots__ = ("_bytes", "__weakref__")

    def __init__(self, data):
        data = bytes(data)
        if len(data) != HANDLE_BYTES:
            from ._errors import InvalidHandleError
            raise InvalidHandleError(f"a handle is {HANDLE_BYTES} bytes, not {len(data)}")
        self._bytes = data

    @classmethod
    def from_bytes(cls, data):
        """The handle whose bytes are ``data`` (checked by tca when used)."""
        return cls(data)

    def __bytes__(self):
        return self._bytes

    def __eq__(self, other):
        return isinstance(other, Handle) and other._bytes == self._bytes

    def __hash__(self):
        return hash(self._bytes)

    def info(self):
        """(owner rank, size in bytes, "cpu" or "gpu"), after tca checked the handle."""
        owner, nbytes, kind = _tca.handle_info(self._bytes)
        return owner, nbytes, "gpu" if kind == GPU else "cpu"

    @property
    def owner(self):
        """The rank that registered the region."""
        return self.info()[0]

    @property
    def nbytes(self):
        """The region's size in bytes."""
        return self.info()[1]

    def __repr__(self):
        try:
            owner, nbytes, kind = self.info()
            return f"tca.Handle(owner={owner}, nbytes={nbytes}, kind={kind!r})"
        except Exception:  # noqa: BLE001 - a stale handle still prints
            return "tca.Handle(<not valid here>)"


# The handles of this process's read-only regions: never a destination.
_readonly = set()


def _handle_bytes(obj, what):
    if isinstance(obj, Handle):
        b = obj._bytes
    elif isinstance(obj, Region):
        b = obj.handle._bytes
    else:
        b = None
    if b is not None:
        if what == "dst" and b in _readonly:
            raise InvalidArgumentError("dst: a read-only region cannot be a destination")
        return b
    raise InvalidArgumentError(
        f"{what}: a tca.Handle or tca.Region, not {type(obj).__name__} (register it with tca.register)")


class Region:
    """Memory registered for remote access (``tca.register``). Keeps its object alive until
    closed; ``close()`` or leaving a ``with`` block deregisters it. ``staged``: the region is a
    tca-owned read-only GPU copy of an immutable array whose own memory CUDA IPC cannot export
    (JAX), made once at registration and freed at close; ``ptr`` is the copy's address."""

    def __init__(self, obj, info, stage=None):
        self.obj = obj
        self.ptr = info.ptr
        self.nbytes = info.nbytes
        self.kind = "gpu" if info.kind == GPU else "cpu"
        self.readonly = info.readonly
        self.staged = stage is not None
        self._handle = Handle(_tca.create_handle(info.ptr, info.nbytes, info.kind))
        self._stage = stage
        self._open = True
        if self.readonly:
            _readonly.add(self._handle._bytes)
        _live.add(self)

    @property
    def handle(self):
        """This region's Handle (it stays bytes after close; tca then refuses it)."""
        return self._handle

    @property
    def closed(self):
        return not self._open

    def close(self):
        """Deregisters the region (a second close raises FreedHandleError)."""
        if not self._open:
            raise FreedHandleError("the region is already closed")
        _tca.destroy_handle(self._handle._bytes)
        stage = self._stage
        self._invalidate()
        if stage is not None:
            stage.free()

    def _invalidate(self):
        self._open = False
        self.obj = None
        self._stage = None  # finalize frees it with everything else
        _readonly.discard(self._handle._bytes)
        _live.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._open:
            self.close()
        return False

    def __repr__(self):
        state = "closed" if not self._open else f"{self.nbytes} bytes {self.kind}"
        return f"tca.Region({state})"


def register(obj):
    """Registers the memory of ``obj`` (NumPy, CuPy, PyTorch, JAX arrays: DLPack,
    __cuda_array_interface__ or the buffer protocol; C-contiguous) and returns its Region.
    JAX arrays give read-only regions; a JAX GPU array, whose memory CUDA IPC cannot export,
    a staged one (``Region.staged``: a copy in tca's GPU memory, made once, freed at close)."""
    if isinstance(obj, Buffer):
        info = obj._info()
    else:
        info = buffer_info(obj)
    if info.nbytes == 0:
        raise InvalidArgumentError(f"{type(obj).__name__}: no bytes to register")
    if immutable(obj):
        info = replace(info, readonly=True)
    try:
        return Region(obj, info)
    except TransportError:
        if not (info.kind == GPU and immutable(obj)):
            raise
    stage = stage_copy(obj, info)  # JAX GPU memory: not exportable by CUDA IPC
    try:
        return Region(obj, replace(info, ptr=stage.ptr, readonly=True), stage)
    except BaseException:
        stage.free()
        raise


def exportable(info):
    """Whether tca can register the memory of ``info`` as it is (GPU memory: CUDA IPC)."""
    try:
        handle = _tca.create_handle(info.ptr, info.nbytes, info.kind)
    except TransportError:
        return False
    _tca.destroy_handle(handle)
    return True


def stage_copy(obj, info):
    """A Buffer of tca-owned GPU memory holding a copy of immutable GPU ``obj`` (``info``),
    taken once its producer finished (``block_until_ready``)."""
    ready = getattr(obj, "block_until_ready", None)
    if ready is not None:
        ready()
    stage = Buffer(info.nbytes, "gpu")
    try:
        _tca.copy_device(stage.ptr, info.ptr, info.nbytes)
    except BaseException:
        stage.free()
        raise
    return stage


def allgather_handles(region):
    """Collective: every rank's handle of ``region`` (a Region or Handle), indexed by rank."""
    return [Handle(b) for b in _tca.allgather_handles(_handle_bytes(region, "allgather_handles"))]


class Buffer:
    """Memory from ``tca.malloc``: ``numpy.asarray(buf)`` (cpu) or ``torch.as_tensor(buf,
    device="cuda")`` / ``cupy.asarray(buf)`` (gpu) view it as bytes. Freed by ``free()`` or
    when the last reference goes."""

    def __init__(self, nbytes, kind):
        self.nbytes = nbytes
        self.kind = kind
        self.ptr = _tca.malloc(nbytes, _KINDS[kind])
        _live.add(self)

    def _info(self):
        from ._buffers import BufferInfo
        if self.ptr == 0:
            raise FreedHandleError("the buffer was freed")
        return BufferInfo(self.ptr, self.nbytes, _KINDS[self.kind], False, "u1", (self.nbytes,))

    @property
    def __array_interface__(self):
        if self.kind != "cpu":
            raise AttributeError("GPU memory: use __cuda_array_interface__")
        return {"shape": (self.nbytes,), "typestr": "|u1", "data": (self._info().ptr, False), "version": 3}

    @property
    def __cuda_array_interface__(self):
        if self.kind != "gpu":
            raise AttributeError("host memory: use __array_interface__")
        return {"shape": (self.nbytes,), "typestr": "|u1", "data": (self._info().ptr, False), "version": 3}

    def free(self):
        """Frees the memory (and deregisters every region inside it)."""
        if self.ptr:
            ptr, self.ptr = self.ptr, 0
            _live.discard(self)
            _tca.free(ptr)

    def _invalidate(self):
        self.ptr = 0

    def __del__(self):
        try:
            self.free()
        except Exception:  # noqa: BLE001 - after finalize there is nothing to free
            pass


def malloc(nbytes, kind="cpu"):
    """Allocates ``nbytes`` of registrable memory, "cpu" (host memory other ranks of the host
    map: single-copy transfers, PIO) or "gpu" (the rank's GPU), as a Buffer."""
    _count(nbytes, "nbytes")
    if kind not in _KINDS:
        raise InvalidArgumentError(f"kind must be 'cpu' or 'gpu', not {kind!r}")
    return Buffer(nbytes, kind)


class Chain:
    """A chain of transfers built once and kicked many times (tcaDesc). ``path``: "auto",
    "shm", "mpi", "cuda", "cuda_ce", "cuda_sm", "cuda_resident", "ucx"."""

    def __init__(self, path="auto"):
        if path not in PATHS:
            raise InvalidArgumentError(f"path must be one of {sorted(PATHS)}, not {path!r}")
        self._d = _tca.desc_new()
        self._keep = []  # the regions the chain's transfers name
        _live.add(self)
        if path != "auto":
            try:
                _tca.desc_set_path(self._d, PATHS[path])
            except BaseException:
                self.close()
                raise

    def _desc(self):
        if not self._d:
            raise InvalidDescError("the chain is closed")
        return self._d

    @staticmethod
    def _slot(notify):
        if notify is None:
            return -1
        if not isinstance(notify, int) or notify < 0:
            from ._errors import InvalidSlotError
            raise InvalidSlotError(f"notify must be a slot in [0, {USER_NOTIFY_SLOTS}), not {notify!r}")
        return notify

    def _remember(self, *ends):
        self._keep.extend(e for e in ends if isinstance(e, Region))

    def memcpy(self, dst, dst_offset, src, src_offset, nbytes, notify=None):
        """Appends dst[dst_offset : +nbytes] <- src[src_offset : +nbytes] (bytes). dst and src are
        Handles (a Region stands for its own); one end must be this rank's. ``notify``: a slot
        raised at dst's owner once this and every earlier transfer is visible there."""
        d = self._desc()
        _tca.desc_memcpy(d, _handle_bytes(dst, "dst"), _count(dst_offset, "dst_offset"),
                         _handle_bytes(src, "src"), _count(src_offset, "src_offset"),
                         _count(nbytes, "nbytes"), self._slot(notify))
        self._remember(dst, src)
        return self

    def memcpy_2d(self, dst, dst_offset, dst_pitch, src, src_offset, src_pitch, width, count,
                  notify=None):
        """Appends ``count`` blocks of ``width`` bytes, block i at dst_offset + i*dst_pitch and
        src_offset + i*src_pitch (all in bytes)."""
        d = self._desc()
        _tca.desc_memcpy_2d(d, _handle_bytes(dst, "dst"), _count(dst_offset, "dst_offset"),
                            _count(dst_pitch, "dst_pitch"), _handle_bytes(src, "src"),
                            _count(src_offset, "src_offset"), _count(src_pitch, "src_pitch"),
                            _count(width, "width"), _count(count, "count"), self._slot(notify))
        self._remember(dst, src)
        return self

    def bind(self, channel=0):
        """Binds the chain to DMA ``channel`` (0 .. USER_DMA_CHANNELS-1) and prepares it."""
        _tca.desc_set(self._desc(), channel)
        return self

    def kick(self, stream=None):
        """Starts the bound chain. With ``stream`` (a CUDA stream object or int) the kick is
        stream-ordered (every transfer on a CUDA path) and can be captured in a CUDA graph,
        which must not outlive the chain."""
        if stream is None:
            _tca.desc_start(self._desc())
        else:
            _tca.desc_start_stream(self._desc(), stream_handle(stream))

    def close(self):
        """Frees the chain; later calls raise InvalidDescError."""
        d, self._d = self._desc(), 0
        self._keep = []
        _live.discard(self)
        _tca.desc_free(d)

    def _invalidate(self):
        if self._d:
            try:
                self.close()
            except Exception:  # noqa: BLE001
                self._d = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._d:
            self.close()
        return False


def wait_dma(channel=0):
    """Returns when every chain kicked on ``channel`` has completed locally."""
    _tca.wait_dma(channel)


def wait_notify(src_rank, slot, stream=None):
    """Waits for a notification on ``slot`` from ``src_rank`` (or ANY_RANK), consumes it and
    returns the sender; the notifying chain's data is then visible. Runs without the GIL;
    Ctrl-C raises KeyboardInterrupt. With ``stream``: holds the CUDA stream until it arrives
    (not ANY_RANK; capturable) and returns None."""
    if stream is not None:
        _tca.wait_notify_stream(src_rank, slot, stream_handle(stream))
        return None
    return _tca.wait_notify(src_rank, slot)


def test_notify(src_rank, slot):
    """Non-blocking wait_notify: the sender where a notification was there (consumed), else None."""
    arrived, sender = _tca.test_notify(src_rank, slot)
    return sender if arrived else None


def notify(rank, slot):
    """Raises ``slot`` at ``rank`` (after pio_fence for PIO stores)."""
    _tca.notify(rank, slot)


def put(dst, offset, array):
    """Copies all of ``array`` into dst[offset:] and returns when it is there (dst: Handle/Region)."""
    info = buffer_info(array)
    _tca.put(_handle_bytes(dst, "dst"), _count(offset, "offset"), info.ptr, info.nbytes)


def get(array, src, offset=0):
    """Fills all of ``array`` from src[offset:] (src: Handle/Region)."""
    info = writable_info(array, "get destination")
    _tca.get(info.ptr, _handle_bytes(src, "src"), _count(offset, "offset"), info.nbytes)
    return array


class _PioKeep:
    """Keeps the region's handle with a PIO view."""

    def __init__(self, ptr, nbytes, handle):
        self.handle = handle
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                    "version": 3}


def pio_view(handle, offset, nbytes):
    """A NumPy uint8 array whose stores go straight into [offset, offset+nbytes) of a peer's
    host region (UnsupportedError where it is not mapped here). Order the stores before a
    notification with ``pio_fence()``."""
    import numpy as np
    h = _handle_bytes(handle, "handle")
    ptr = _tca.pio_pointer(h, _count(offset, "offset"), _count(nbytes, "nbytes"))
    return np.asarray(_PioKeep(ptr, nbytes, handle))


def pio_fence():
    """Orders every earlier PIO store before any later notification."""
    _tca.pio_fence()


def peer_transport(peer):
    """The transport AUTO uses between this rank's and ``peer``'s host memory."""
    return _tca.peer_transport(peer)


def auto_transport(peer, local="cpu", remote="cpu", nbytes=8):
    """(name, table): the transport AUTO takes for ``nbytes`` between memory kinds, and the size table."""
    return _tca.auto_transport(peer, _KINDS[local], _KINDS[remote], nbytes)


def path_available(path, peer):
    """Whether ``path`` (a PATHS name) can carry transfers between this rank and ``peer``."""
    return _tca.path_available(PATHS[path], peer)


def settings():
    """Every environment setting the library reads, as dicts (name, value, default, ...)."""
    return _tca.settings()


def cuda_device():
    """This rank's CUDA device (UnsupportedError without a GPU or CUDA build)."""
    return _tca.cuda_device()
