# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# GPU memory: PyTorch tensors and CuPy arrays registered, chains kicked on streams, waits held
# in streams, collectives on tensors (host-called, stream-ordered, captured) against NumPy.
import numpy as np
import pytest

import tca

torch = pytest.importorskip("torch")
if not (tca.HAS_CUDA and torch.cuda.is_available()):
    pytest.skip("needs a CUDA build of tca and a GPU", allow_module_level=True)


@pytest.fixture(autouse=True)
def on_tca_device():
    torch.cuda.set_device(tca.cuda_device())


def test_torch_chain_on_stream(ranks):
    rank, size = ranks
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    src = torch.arange(1 << 16, dtype=torch.int32, device="cuda") * (rank + 1)
    dst = torch.full((1 << 16,), -1, dtype=torch.int32, device="cuda")
    stream = torch.cuda.Stream()
    with tca.register(src) as rs, tca.register(dst) as rd:
        assert rd.kind == "gpu"
        peers = tca.allgather_handles(rd)
        assert peers[nxt].info()[2] == "gpu"
        with tca.Chain() as chain:
            chain.memcpy(peers[nxt], 0, rs, 0, src.numel() * 4, notify=2).bind(0)
            torch.cuda.synchronize()
            for _ in range(3):
                chain.kick(stream)
                tca.wait_notify(prv, 2, stream=stream)
                stream.synchronize()
                expect = np.arange(1 << 16, dtype=np.int32) * (prv + 1)
                np.testing.assert_array_equal(dst.cpu().numpy(), expect)
                tca.barrier()


def test_cupy_chain_host_kick(ranks):
    cupy = pytest.importorskip("cupy")
    rank, size = ranks
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    with cupy.cuda.Device(tca.cuda_device()):
        src = cupy.arange(1000, dtype=cupy.float64) + rank
        dst = cupy.zeros(1000, dtype=cupy.float64)
        cupy.cuda.runtime.deviceSynchronize()
        with tca.register(src) as rs, tca.register(dst) as rd:
            peers = tca.allgather_handles(rd)
            with tca.Chain() as chain:
                chain.memcpy(peers[nxt], 0, rs, 0, 8000, notify=4).bind(1)
                chain.kick()
                tca.wait_dma(1)
                tca.wait_notify(prv, 4)
            np.testing.assert_array_equal(cupy.asnumpy(dst), np.arange(1000) + prv)
            tca.barrier()


def test_gpu_malloc_as_tensor(ranks):
    rank, size = ranks
    buf = tca.malloc(4096, "gpu")
    t = torch.as_tensor(buf, device="cuda")
    assert t.shape == (4096,) and t.dtype == torch.uint8
    t.fill_(rank + 1)
    with tca.register(buf) as region:
        peers = tca.allgather_handles(region)
        got = np.zeros(16, np.uint8)
        torch.cuda.synchronize()
        tca.barrier()
        tca.get(got, peers[(rank + 1) % size], 100)
        np.testing.assert_array_equal(got, np.full(16, (rank + 1) % size + 1))
        tca.barrier()
    del t
    buf.free()


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32, torch.float64])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_torch_allreduce_matches_numpy(ranks, dtype, op):
    rank, size = ranks
    n = 4099
    def part(r):
        return ((np.arange(n) * (r + 3)) % 97 - 40)
    send = torch.tensor(part(rank), dtype=dtype, device="cuda")
    all_ = np.stack([part(r) for r in range(size)])
    expect = {"sum": all_.sum(0), "max": all_.max(0), "min": all_.min(0)}[op]
    out = tca.allreduce(send, op=op)
    assert out.device.type == "cuda" and out.dtype == dtype
    np.testing.assert_array_equal(out.cpu().numpy(), expect.astype(out.cpu().numpy().dtype))
    recv = torch.empty_like(send)
    stream = torch.cuda.current_stream()
    tca.allreduce(send, recv, op=op, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(recv.cpu().numpy(), expect.astype(recv.cpu().numpy().dtype))


def test_torch_allgather(ranks):
    rank, size = ranks
    send = torch.full((5,), rank, dtype=torch.int64, device="cuda")
    recv = torch.zeros(5 * size, dtype=torch.int64, device="cuda")
    tca.allgather(send, recv)
    np.testing.assert_array_equal(recv.cpu().numpy(), np.repeat(np.arange(size), 5))


def test_allreduce_captured_in_graph(ranks):
    rank, size = ranks
    x = torch.full((1000,), float(rank), device="cuda")
    y = torch.zeros(1000, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        tca.allreduce(x, y, stream=side)  # makes the cached collective outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        x.add_(1.0)
        tca.allreduce(x, y, stream=torch.cuda.current_stream())
    for it in range(1, 4):
        graph.replay()
        torch.cuda.synchronize()
        expect = sum(range(size)) + size * it
        np.testing.assert_array_equal(y.cpu().numpy(), np.full(1000, expect, np.float32))


def test_persistent_collective_graph(ranks):
    rank, size = ranks
    x = torch.ones(1, device="cuda")
    y = torch.zeros(1, device="cuda")
    with tca.Collective("allreduce", x, y) as coll:
        coll.start()
        coll.wait()
        assert y.item() == size
        y.zero_()
        graph = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda.synchronize()
        with torch.cuda.graph(graph):
            for _ in range(10):
                coll.start_on(torch.cuda.current_stream())
        graph.replay()
        torch.cuda.synchronize()
        assert y.item() == size
        del graph


def test_gpu_bad_inputs():
    send = torch.zeros(4, device="cuda")
    with pytest.raises(tca.InvalidArgumentError, match="memory kinds"):
        tca.allreduce(send, np.zeros(4, np.float32))
    with pytest.raises(tca.InvalidArgumentError, match="dtype"):
        tca.allreduce(torch.zeros(4, dtype=torch.float16, device="cuda"))
    with pytest.raises(tca.InvalidArgumentError, match="contiguous"):
        tca.register(torch.zeros(4, 4, device="cuda")[:, 1])
    with pytest.raises(tca.InvalidArgumentError, match="stream"):
        tca.allreduce(np.zeros(4, np.float32), stream=0)
