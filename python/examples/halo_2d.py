# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""2D halo exchange with block-stride chains (memcpy_2d): the grid is split into column
blocks, one per rank; each rank's boundary columns go into its neighbours' halo columns.
NumPy arrays on the CPU, or PyTorch tensors on the GPU (--gpu; kicks on the current stream).

    tca-run -n 4 python halo_2d.py [--gpu]
"""
import sys

import numpy as np

import tca

FROM_LEFT, FROM_RIGHT = 1, 2  # notification slots


def make_grid(ny, nx, rank, gpu):
    grid = np.zeros((ny, nx + 2), np.float32)  # columns 0 and nx+1 are halos
    grid[:, 1:nx + 1] = rank * 100 + np.arange(ny)[:, None]
    if gpu:
        import torch
        torch.cuda.set_device(tca.cuda_device())  # the GPU tca gave this rank
        return torch.from_numpy(grid).cuda()
    return grid


def main(gpu=False, ny=64, nx=32, iterations=3):
    rank, size = tca.rank(), tca.size()
    left, right = (rank - 1) % size, (rank + 1) % size
    grid = make_grid(ny, nx, rank, gpu)
    item, pitch = 4, (nx + 2) * 4
    stream = None
    if gpu:
        import torch
        stream = torch.cuda.current_stream()
    with tca.register(grid) as region:
        peers = tca.allgather_handles(region)
        with tca.Chain() as chain:
            # my first column -> left's right halo; my last column -> right's left halo
            chain.memcpy_2d(peers[left], (nx + 1) * item, pitch, region, 1 * item, pitch,
                            item, ny, notify=FROM_RIGHT)
            chain.memcpy_2d(peers[right], 0, pitch, region, nx * item, pitch, item, ny,
                            notify=FROM_LEFT)
            chain.bind(0)
            for _ in range(iterations):
                chain.kick(stream)
                if gpu:
                    tca.wait_notify(left, FROM_LEFT, stream=stream)
                    tca.wait_notify(right, FROM_RIGHT, stream=stream)
                    stream.synchronize()
                else:
                    tca.wait_dma(0)
                    tca.wait_notify(left, FROM_LEFT)
                    tca.wait_notify(right, FROM_RIGHT)
                tca.barrier()
    out = grid.cpu().numpy() if gpu else grid
    rows = np.arange(ny, dtype=np.float32)
    assert (out[:, 0] == left * 100 + rows).all(), "halo from the left is wrong"
    assert (out[:, nx + 1] == right * 100 + rows).all(), "halo from the right is wrong"
    if rank == 0:
        print(f"halo_2d: {ny}x{nx} per rank, {size} ranks, {'gpu' if gpu else 'cpu'}: ok")


if __name__ == "__main__":
    with tca.init():
        main(gpu="--gpu" in sys.argv)
