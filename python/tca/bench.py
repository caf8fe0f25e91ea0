# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""python -m tca.bench: what calling tca from Python costs, beside the C programs' figures.

CPU rows (2 ranks, tca-run/mpirun/torchrun): py.chain, a ping-pong of a chain kicked from
Python (kick, wait_dma, wait_notify: what tca-pingpong's *.chain rows do in C), per size.
With --compare-c TCA_PINGPONG --tca-run TCA_RUN, started alone (not as a job), it launches
tca-pingpong's shm.chain rows and its own rows one after the other, in the same run, and prints
them together.

GPU rows (--gpu; one GPU per rank; under torchrun, whose variables start both tca and
torch.distributed with NCCL): allreduce of one float32 inside a captured torch.cuda.graph,
tca.Collective.start_on against torch.distributed.all_reduce captured the same way; allreduce
busbw at --coll-bytes (stream-ordered, both); and py.cuda.chain, a ping-pong of 8 B chains
between GPU buffers of ranks 0 and 1 kicked from Python.

The table goes to stdout (stderr with --json, which prints one JSON object on stdout).
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import tca


def _sizes(lo, hi):
    s = lo
    while s <= hi:
        yield s
        s *= 2


_STAT = {"median": statistics.median, "min": min}


def pingpong(src, dst_peer, iters, warmup, reps, slot=0, channel=0, path="auto", stat="median"):
    """Half round trips in microseconds (median or min of reps batches) between ranks 0 and 1."""
    rank = tca.rank()
    peer = 1 - rank
    nbytes = src.nbytes
    with tca.Chain(path=path) as chain:
        chain.memcpy(dst_peer, 0, src, 0, nbytes, notify=slot).bind(channel)
        kick, wait_dma, wait_notify = chain.kick, tca.wait_dma, tca.wait_notify
        batches = []
        for rep in range(reps + 1):
            tca.barrier()
            count = warmup if rep == 0 else iters
            start = time.perf_counter()
            for _ in range(count):
                if rank == 0:
                    kick()
                    wait_dma(channel)
                    wait_notify(peer, slot)
                else:
                    wait_notify(peer, slot)
                    kick()
                    wait_dma(channel)
            if rep > 0:
                batches.append((time.perf_counter() - start) / count / 2 * 1e6)
    return _STAT[stat](batches)


def cpu_rows(args):
    rows = []
    if tca.rank() > 1:
        return rows
    for nbytes in _sizes(args.min_bytes, args.max_bytes):
        src = tca.malloc(nbytes)
        dst = tca.malloc(nbytes)
        np.asarray(src)[:] = 1
        rs, rd = tca.register(src), tca.register(dst)
        handles = _pair_handles(rd)
        lat = pingpong(rs, handles[1 - tca.rank()], args.iters, args.warmup, args.repetitions,
                       stat=args.statistic)
        rows.append({"path": "py.chain", "src": "cpu", "dst": "cpu", "bytes": nbytes,
                     "latency_us": lat, "bandwidth_GBps": nbytes / lat / 1e3,
                     "transport": tca.auto_transport(1 - tca.rank(), "cpu", "cpu", nbytes)[0]})
        rd.close()
        rs.close()
        src.free()
        dst.free()
    return rows


def _pair_handles(region):
    # Ranks 0 and 1 exchange handles over the bootstrap (other ranks, if any, sit out).
    return tca.allgather_handles(region)[:2]


def gpu_rows(args):
    import torch
    import torch.distributed as dist
    rank, size = tca.rank(), tca.size()
    torch.cuda.set_device(tca.cuda_device())
    if not dist.is_initialized():
        dist.init_process_group("nccl", device_id=torch.device("cuda", tca.cuda_device()))
    rows = []
    rows += _graph_allreduce_rows(args, torch, dist, size)
    rows += _busbw_rows(args, torch, dist, size)
    rows += _gpu_chain_rows(args, torch)
    dist.barrier()
    return rows


def _time_graph(torch, graph, replays):
    graph.replay()
    torch.cuda.synchronize()
    tca.barrier()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return begin.elapsed_time(end) * 1e3 / replays  # us per replay


def _capture(torch, fn, ops):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(ops):
            fn()
    return graph


def _graph_allreduce_rows(args, torch, dist, size):
    ops = args.graph_ops
    x = torch.ones(1, device="cuda")
    y = torch.empty(1, device="cuda")
    coll = tca.Collective("allreduce", x, y)
    g_tca = _capture(torch, lambda: coll.start_on(torch.cuda.current_stream()), ops)
    t_tca = _time_graph(torch, g_tca, args.replays) / ops
    y.zero_()
    g_tca.replay()
    torch.cuda.synchronize()
    assert y.item() == size, f"tca allreduce in a graph gave {y.item()}, not {size}"
    z = torch.ones(1, device="cuda")
    g_nccl = _capture(torch, lambda: dist.all_reduce(z), ops)
    t_nccl = _time_graph(torch, g_nccl, args.replays) / ops
    algo = coll.algorithm
    coll.close()
    del g_tca, g_nccl
    return [{"path": "graph.allreduce", "impl": "tca", "bytes": 4, "ranks": size,
             "latency_us": t_tca, "algorithm": algo},
            {"path": "graph.allreduce", "impl": "nccl", "bytes": 4, "ranks": size,
             "latency_us": t_nccl}]


def _busbw_rows(args, torch, dist, size):
    n = args.coll_bytes // 4
    x = torch.ones(n, device="cuda")
    y = torch.empty(n, device="cuda")
    coll = tca.Collective("allreduce", x, y)
    stream = torch.cuda.current_stream()
    rows = []
    for impl, fn in (("tca", lambda: coll.start_on(stream)), ("nccl", lambda: dist.all_reduce(x))):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        tca.barrier()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(args.coll_iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        us = begin.elapsed_time(end) * 1e3 / args.coll_iters
        busbw = args.coll_bytes / us / 1e3 * 2 * (size - 1) / size
        rows.append({"path": "stream.allreduce", "impl": impl, "bytes": args.coll_bytes,
                     "ranks": size, "latency_us": us, "busbw_GBps": busbw})
    assert y[0].item() == size, "tca allreduce of the busbw rows is wrong"
    coll.close()
    return rows


def _gpu_chain_rows(args, torch):
    rows = []
    src = torch.ones(2, device="cuda", dtype=torch.float32)  # 8 bytes
    dst = torch.zeros(2, device="cuda", dtype=torch.float32)
    rs, rd = tca.register(src), tca.register(dst)
    handles = tca.allgather_handles(rd)
    if tca.rank() < 2:
        for path in ("cuda", "cuda_resident"):
            # pingpong's barriers are among ranks 0 and 1 only if size == 2; others wait below
            lat = _pair_pingpong(rs, handles, args, path)
            rows.append({"path": f"py.{path}.chain", "src": "gpu", "dst": "gpu", "bytes": 8,
                         "latency_us": lat})
    tca.barrier()
    rd.close()
    rs.close()
    return rows


def _pair_pingpong(rs, handles, args, path):
    rank = tca.rank()
    peer = 1 - rank
    with tca.Chain(path=path) as chain:
        chain.memcpy(handles[peer], 0, rs, 0, 8, notify=0).bind(0)
        batches = []
        for rep in range(args.repetitions + 1):
            count = args.warmup if rep == 0 else args.iters
            start = time.perf_counter()
            for _ in range(count):
                if rank == 0:
                    chain.kick()
                    tca.wait_dma(0)
                    tca.wait_notify(peer, 0)
                else:
                    tca.wait_notify(peer, 0)
                    chain.kick()
                    tca.wait_dma(0)
            if rep > 0:
                batches.append((time.perf_counter() - start) / count / 2 * 1e6)
    return _STAT[args.statistic](batches)


def table(rows, out):
    print(f"{'path':20} {'impl':5} {'src>dst':8} {'ranks':>5} {'size (bytes)':>13} "
          f"{'latency (us)':>13} {'GB/s':>9}", file=out)
    for r in rows:
        bw = r.get("busbw_GBps", r.get("bandwidth_GBps"))
        kinds = f"{r['src']}>{r['dst']}" if "src" in r else ""
        print(f"{r['path']:20} {r.get('impl', 'tca'):5} {kinds:8} {r.get('ranks', 2):>5} "
              f"{r['bytes']:>13} {r['latency_us']:>13.3f} "
              f"{'' if bw is None else format(bw, '.3f'):>9}", file=out)


def report(rows, args, bootstrap, size):
    doc = {"benchmark": "tca.bench", "ranks": size, "bootstrap": bootstrap,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "host": platform.node(), "python": platform.python_version(),
           "command_line": " ".join([sys.executable, "-m", "tca.bench"] + sys.argv[1:]),
           "rows": rows}
    out = sys.stderr if args.json else sys.stdout
    print(f"# tca.bench {tca.__version__}: {size} ranks, bootstrap {bootstrap}; latency: half a "
          f"round trip (ping-pong) or time per operation; {args.statistic} of batches", file=out)
    table(rows, out)
    if args.json:
        print(json.dumps(doc, indent=2))
    sys.stdout.flush()


def launch(args):
    """--compare-c: the C rows, then this program's, each as a 2-rank job, one table."""
    common = ["-b", str(args.min_bytes), "-e", str(args.max_bytes), "-s", args.statistic,
              "-r", str(args.repetitions)]
    c = subprocess.run([args.tca_run, "-n", "2", args.compare_c, "-p", "shm.chain", "--json"]
                       + common, check=True, capture_output=True, text=True)
    py_args = [a for a in sys.argv[1:] if a not in ("--json",)]
    skip = {"--compare-c", "--tca-run"}
    filtered, i = [], 0
    while i < len(py_args):
        if py_args[i] in skip:
            i += 2
            continue
        filtered.append(py_args[i])
        i += 1
    p = subprocess.run([args.tca_run, "-n", "2", sys.executable, "-m", "tca.bench", "--json"]
                       + filtered, check=True, capture_output=True, text=True)
    c_doc = json.loads(c.stdout)
    py_doc = json.loads(p.stdout[p.stdout.index("{"):])
    rows = [dict(r, path="c." + r["path"]) for r in c_doc["rows"]] + py_doc["rows"]
    by_size = {}
    for r in rows:
        by_size.setdefault(r["bytes"], {})[r["path"]] = r["latency_us"]
    for r in py_doc["rows"]:
        c_lat = by_size[r["bytes"]].get("c.shm.chain")
        if c_lat is not None:
            r["over_c_us"] = r["latency_us"] - c_lat
    report(rows, args, py_doc["bootstrap"], 2)
    out = sys.stderr if args.json else sys.stdout
    for r in py_doc["rows"]:
        if "over_c_us" in r:
            print(f"# {r['bytes']} B: Python adds {r['over_c_us']:.3f} us one way over C "
                  "shm.chain", file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tca.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", action="store_true", help="the GPU rows (see above)")
    parser.add_argument("-b", "--min-bytes", type=int, default=8)
    parser.add_argument("-e", "--max-bytes", type=int, default=4096)
    parser.add_argument("-i", "--iters", type=int, default=2000, help="round trips per batch")
    parser.add_argument("-w", "--warmup", type=int, default=200)
    parser.add_argument("-r", "--repetitions", type=int, default=5)
    parser.add_argument("-s", "--statistic", choices=["median", "min"], default="median",
                        help="what is reported of the batches")
    parser.add_argument("--graph-ops", type=int, default=20, help="allreduces per captured graph")
    parser.add_argument("--replays", type=int, default=50)
    parser.add_argument("--coll-bytes", type=int, default=128 << 20)
    parser.add_argument("--coll-iters", type=int, default=20)
    parser.add_argument("--compare-c", metavar="TCA_PINGPONG",
                        help="started alone: run tca-pingpong's shm.chain rows beside these")
    parser.add_argument("--tca-run", default="tca-run", help="the launcher for --compare-c")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.compare_c:
        launch(args)
        return
    with tca.init():
        if tca.size() < 2:
            sys.exit("tca.bench needs 2 ranks or more: tca-run -n 2 python -m tca.bench")
        rows = gpu_rows(args) if args.gpu else cpu_rows(args)
        if tca.rank() == 0:
            report(rows, args, tca.bootstrap_info()[0], tca.size())
        tca.barrier()


if __name__ == "__main__":
    main()
