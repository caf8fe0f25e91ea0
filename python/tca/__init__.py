# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca for Python: registered NumPy/CuPy/PyTorch buffers, chains of one-sided transfers built
once and kicked (from Python or a CUDA stream/graph), notifications, PIO and collectives.

    import tca, numpy as np
    with tca.init():
        buf = np.zeros(1024, np.uint8)
        region = tca.register(buf)
        peers = tca.allgather_handles(region)
        ...
"""
from ._errors import *  # noqa: F401,F403
from ._errors import ERRORS as _ERRORS
from ._core import (ANY_RANK, HANDLE_BYTES, PATHS, USER_DMA_CHANNELS, USER_NOTIFY_SLOTS,
                    Buffer, Chain, Handle, Region, Session, allgather_handles, auto_transport,
                    barrier, bootstrap_info, cuda_device, finalize, get, get_timeout, init,
                    malloc, notify, path_available, peer_transport, pio_fence, pio_view, put,
                    rank, register, set_timeout, settings, size, test_notify, version,
                    wait_dma, wait_notify)
from ._coll import Collective, allgather, allreduce, choose_algorithm, release_cache
from . import _tca

HAS_CUDA = bool(_tca.has_cuda)
__version__ = "%d.%d.%d" % _tca.version()
__all__ = [c.__name__ for c in _ERRORS] + [
    "ANY_RANK", "HANDLE_BYTES", "PATHS", "USER_DMA_CHANNELS", "USER_NOTIFY_SLOTS", "HAS_CUDA",
    "Buffer", "Chain", "Collective", "Handle", "Region", "Session", "allgather",
    "allgather_handles", "allreduce", "auto_transport", "barrier", "bootstrap_info",
    "choose_algorithm", "cuda_device", "finalize", "get", "get_timeout", "init", "malloc",
    "notify", "path_available", "peer_transport", "pio_fence", "pio_view", "put", "rank",
    "register", "release_cache", "set_timeout", "settings", "size", "test_notify", "version",
    "wait_dma", "wait_notify"]
