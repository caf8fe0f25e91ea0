# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""Handles passed through torch.distributed's key-value store instead of
tca.allgather_handles: bytes(handle) in, tca.Handle.from_bytes out.

    torchrun --nproc-per-node 2 store_handles.py      (tca starts from torchrun's variables)
"""
import os
from datetime import timedelta

import numpy as np

import tca


def open_store():
    import torch.distributed as dist
    rank, size = tca.rank(), tca.size()
    host = os.environ.get("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" in os.environ:
        port = int(os.environ["MASTER_PORT"]) + 2  # torchrun: MASTER_PORT, tca: +1
    else:  # started by tca-run or mpirun: rank 0 picks a port and tells the others through tca
        port = 0
    if port == 0:
        # wait_for_workers=False: the others learn the port only after this returns
        store = dist.TCPStore(host, 0, size, True, timeout=timedelta(seconds=60),
                              wait_for_workers=False) if rank == 0 else None
        picked = np.array([store.port if rank == 0 else 0], np.int64)
        picked = tca.allreduce(picked, op="max")
        if rank != 0:
            store = dist.TCPStore(host, int(picked[0]), size, False, timeout=timedelta(seconds=60))
        return store
    return dist.TCPStore(host, port, size, rank == 0, timeout=timedelta(seconds=60))


def main():
    rank, size = tca.rank(), tca.size()
    store = open_store()
    buf = np.zeros(256, np.uint8)
    with tca.register(buf) as region:
        store.set(f"tca/handle/{rank}", bytes(region.handle))
        nxt, prv = (rank + 1) % size, (rank - 1) % size
        peer = tca.Handle.from_bytes(store.get(f"tca/handle/{nxt}"))
        assert peer.owner == nxt
        tca.put(peer, 0, np.full(256, rank, np.uint8))
        tca.notify(nxt, 7)
        tca.wait_notify(prv, 7)
        assert (buf == prv).all()
        tca.barrier()
    if rank == 0:
        print(f"store_handles: handles through torch.distributed.TCPStore on {size} ranks: ok")


if __name__ == "__main__":
    with tca.init():
        main()
