# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""A training-step-like loop whose gradient allreduce is captured in a CUDA graph with
PyTorch: tca.Collective.start_on(stream) joins the graph, and every replay runs the step,
the allreduce and the update without the host.

    tca-run -n 4 python graph_allreduce.py       (one GPU per rank)
"""
import tca


def main(n=1 << 16, steps=5):
    import torch
    rank, size = tca.rank(), tca.size()
    torch.cuda.set_device(tca.cuda_device())  # the GPU tca gave this rank
    w = torch.zeros(n, device="cuda")
    x = torch.full((n,), float(rank + 1), device="cuda")
    grad = torch.empty(n, device="cuda")
    total = torch.empty(n, device="cuda")
    coll = tca.Collective("allreduce", grad, total)  # made once, outside the capture

    def step(stream):
        torch.mul(x, 0.5, out=grad)           # "backward": this rank's gradient
        coll.start_on(stream)                 # allreduce of grad into total
        w.sub_(total, alpha=1.0 / size)       # "optimizer": the averaged gradient

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step(side)                            # warm-up outside the capture (PyTorch's rule)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step(torch.cuda.current_stream())
    for _ in range(steps):
        graph.replay()
    torch.cuda.synchronize()
    mean_grad = 0.5 * sum(r + 1 for r in range(size)) / size
    expect = -(steps + 1) * mean_grad
    assert torch.allclose(w, torch.full_like(w, expect)), (w[:4], expect)
    coll.close()
    if rank == 0:
        print(f"graph_allreduce: {steps} replays, {n} floats, {size} ranks: ok")


if __name__ == "__main__":
    with tca.init():
        main()
