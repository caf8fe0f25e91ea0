# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca's exceptions: TcaError and one subclass per tcaResult code (tca.h)."""
import builtins

from . import _tca


class TcaError(Exception):
    """A tca call failed. ``code`` is the tcaResult number, the text tca's message."""

    code = -1


def _make(name, code, doc, *bases):
    cls = type(name, (TcaError, *bases), {"__doc__": doc, "code": code})
    cls.__module__ = "tca"
    return cls


InvalidArgumentError = _make("InvalidArgumentError", 1, "Null, zero or malformed argument; an object that is no buffer, a non-contiguous array, a read-only destination, an unsupported dtype.", ValueError)
NotInitializedError = _make("NotInitializedError", 2, "A call before tca.init or after tca.finalize.")
AlreadyInitializedError = _make("AlreadyInitializedError", 3, "tca.init called twice.")
OutOfMemoryError = _make("OutOfMemoryError", 4, "An allocation failed.", MemoryError)
OutOfResourcesError = _make("OutOfResourcesError", 5, "Too many registered regions, descriptors, ...")
OutOfBoundsError = _make("OutOfBoundsError", 6, "An offset or size outside a registered region.", IndexError)
SizeOverflowError = _make("SizeOverflowError", 7, "offset + size (or a 2D extent) overflows.", OverflowError)
InvalidHandleError = _make("InvalidHandleError", 8, "Handle bytes corrupted or forged.")
ForeignHandleError = _make("ForeignHandleError", 9, "A handle made by another job.")
FreedHandleError = _make("FreedHandleError", 10, "The region was deregistered or freed.")
InvalidChannelError = _make("InvalidChannelError", 11, "A DMA channel outside the user's channels.")
InvalidDescError = _make("InvalidDescError", 12, "A closed chain, or one kicked before bind.")
InvalidRankError = _make("InvalidRankError", 13, "A rank outside [0, size).")
InvalidSlotError = _make("InvalidSlotError", 14, "A notification slot outside the user's slots.")
UnreachableError = _make("UnreachableError", 15, "The requested path cannot reach that peer.")
UnsupportedError = _make("UnsupportedError", 16, "Not available here (e.g. PIO into unmapped memory, CUDA in a build without it).")
TimeoutError = _make("TimeoutError", 17, "A wait outlived the timeout (tca.set_timeout).", builtins.TimeoutError)
PeerFailedError = _make("PeerFailedError", 18, "A peer process is gone.")
TransportError = _make("TransportError", 19, "The system, MPI or CUDA reported a failure.")
InternalError = _make("InternalError", 20, "A fault inside tca.")

ERRORS = [TcaError, InvalidArgumentError, NotInitializedError, AlreadyInitializedError,
          OutOfMemoryError, OutOfResourcesError, OutOfBoundsError, SizeOverflowError,
          InvalidHandleError, ForeignHandleError, FreedHandleError, InvalidChannelError,
          InvalidDescError, InvalidRankError, InvalidSlotError, UnreachableError,
          UnsupportedError, TimeoutError, PeerFailedError, TransportError, InternalError]
_tca._set_error_classes(ERRORS)
__all__ = [c.__name__ for c in ERRORS]
