# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""What tca needs to know of a user's array: address, size, memory kind, writability, dtype."""
from dataclasses import dataclass

from . import _tca
from ._errors import InvalidArgumentError

CPU = 0
GPU = 1

# DLPack device types that are host memory (CPU, CUDA host, ROCm host) and CUDA device memory.
_DLPACK_HOST = {1, 3, 11}
_DLPACK_CUDA = {2, 13}


@dataclass(frozen=True)
class BufferInfo:
    ptr: int
    nbytes: int
    kind: int          # CPU or GPU
    readonly: bool
    dtype: str         # "f4", "i8", ... ("V1" where unknown)
    shape: tuple


def _from_cai(obj, cai):
    shape = tuple(cai["shape"])
    typestr = cai["typestr"]
    itemsize = int(typestr[2:])
    n = 1
    for s in shape:
        n *= s
    strides = cai.get("strides")
    if strides is not None:
        expect = itemsize
        for dim, stride in zip(reversed(shape), reversed(strides)):
            if dim != 1 and stride != expect:
                raise InvalidArgumentError(f"{type(obj).__name__}: not C-contiguous (strides {tuple(strides)})")
            expect *= dim
    ptr, readonly = cai["data"]
    return BufferInfo(ptr, n * itemsize, GPU, bool(readonly), typestr[1:], shape)


def _from_buffer(obj):
    import numpy as np
    view = memoryview(obj)
    if not view.c_contiguous:
        raise InvalidArgumentError(f"{type(obj).__name__}: not C-contiguous")
    arr = np.asarray(view)
    ptr = arr.__array_interface__["data"][0]
    dtype = arr.dtype.kind + str(arr.dtype.itemsize)
    return BufferInfo(ptr, view.nbytes, CPU, bool(view.readonly), dtype, tuple(view.shape))


def buffer_info(obj):
    """The memory of ``obj``: __cuda_array_interface__ first, then the buffer protocol, then DLPack.

    Raises InvalidArgumentError for objects without memory or with non-contiguous memory.
    """
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(obj, cai)
    try:
        memoryview(obj).release()
        has_buffer = True
    except TypeError:
        has_buffer = False
    if has_buffer:
        return _from_buffer(obj)
    if not hasattr(obj, "__dlpack__"):
        raise InvalidArgumentError(
            f"{type(obj).__name__}: exposes no memory (DLPack, __cuda_array_interface__ or the buffer protocol)")
    ptr, nbytes, device, contiguous, dtype, shape = _tca.dlpack_info(obj)
    if not contiguous:
        raise InvalidArgumentError(f"{type(obj).__name__}: not C-contiguous")
    if device in _DLPACK_HOST:
        kind = CPU
    elif device in _DLPACK_CUDA:
        kind = GPU
    else:
        raise InvalidArgumentError(f"{type(obj).__name__}: memory on DLPack device type {device}, neither host nor CUDA")
    return BufferInfo(ptr, nbytes, kind, False, dtype, tuple(shape))


def immutable(obj):
    """Whether ``obj`` is an array nothing may write after it exists (JAX)."""
    return type(obj).__module__.split(".")[0] in ("jax", "jaxlib")


def writable_info(obj, what):
    if immutable(obj):
        raise InvalidArgumentError(f"{what}: {type(obj).__name__} is immutable (JAX)")
    info = buffer_info(obj)
    if info.readonly:
        raise InvalidArgumentError(f"{what}: {type(obj).__name__} is read-only")
    return info


def stream_handle(stream):
    """A CUDA stream as an integer: int, torch.cuda.Stream (.cuda_stream), cupy (.ptr),
    or any object with __cuda_stream__."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        return int(proto()[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value
    raise InvalidArgumentError(f"{type(stream).__name__}: not a CUDA stream (int, torch/cupy stream, __cuda_stream__)")
