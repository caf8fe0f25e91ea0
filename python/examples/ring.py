# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""Ring exchange with a notification: every rank's chain writes its block into the next
rank's buffer and raises slot 0 there; each rank waits for the previous one's.

    tca-run -n 4 python ring.py        (or mpirun -n 4, or torchrun --nproc-per-node 4)
"""
import numpy as np

import tca


def main(iterations=10, n=4096):
    rank, size = tca.rank(), tca.size()
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    send = np.empty(n, np.int64)
    recv = np.zeros(n, np.int64)
    with tca.register(send) as rs, tca.register(recv) as rr:
        peers = tca.allgather_handles(rr)  # every rank's recv handle
        with tca.Chain() as chain:
            chain.memcpy(peers[nxt], 0, rs, 0, send.nbytes, notify=0).bind(0)  # built once
            for it in range(iterations):
                send[:] = rank * 1000 + it
                chain.kick()                       # only kicked each iteration
                tca.wait_dma(0)                    # send may be changed again
                assert tca.wait_notify(prv, 0) == prv
                assert (recv == prv * 1000 + it).all(), "ring: wrong data"
                tca.barrier()                      # recv is overwritten next iteration
    if rank == 0:
        print(f"ring: {iterations} exchanges of {send.nbytes} bytes on {size} ranks: ok")


if __name__ == "__main__":
    with tca.init():
        main()
