#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""A host-family fabric description of the GPU programs' path from `tca-topo --json`.

    sim/topo_to_fabric.py topo.json --name h200x4-nvlink-sm [--date 2026-11-27] > FILE.fabric

Every value comes from a table of tca-topo (medians over the ordered pairs of ranks), as
h200x4-nvlink-sm.fabric was taken (docs/SIM.md, "Fabric descriptions"):

  endpoint_latency        half the bare flag store's one way (two link crossings)
  endpoint_bandwidth      the SM stores' one-direction rate (tca-sim sends the inline
                          protocol's steps as their stores: 8 bytes for every 4 of data)
  device_call             host-called 8 B allreduce through the resident kernel, less the same
                          program replayed in a CUDA graph (median over the algorithms)
  device_launch_call      the same with a launch per call
  device_step             graph form: (ring - recursive doubling) / (their step difference),
                          less the flag's flight
  device_block_bandwidth  one block of 512 threads storing into the next GPU
  device_work_<op>_<alg>  graph form of that collective and algorithm, less its steps at
                          (device_step + the flag's flight) each: its pieces placed, its
                          local reduction (tca-topo with allgather and dissemination rows)

A table the file lacks (tca-topo before its GPU program rows) gives `unmeasured`, which
tca-sim takes as the parameter left out. Errors (no latency rows, a value that is not
positive) name the table.
"""

import argparse
import json
import math
import statistics
import sys


class TopoError(Exception):
    pass


def rows_of(topo, table, **match):
    return [r for r in topo.get("rows", []) if r.get("table") == table and
            all(r.get(k) == v for k, v in match.items())]


def median_of(rows, key, what):
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    if not values:
        raise TopoError(f"tca-topo JSON has no {what} rows")
    value = statistics.median(values)
    if not value > 0:
        raise TopoError(f"{what}: median {value} is not positive")
    return value


def program_steps(op, algorithm, ranks):
    """Steps of a GPU collective (docs/COLLECTIVES.md's table)."""
    if algorithm == "ring":
        return (2 if op == "allreduce" else 1) * (ranks - 1)
    if algorithm == "recursive_doubling":
        k = int(math.floor(math.log2(ranks)))
        return k if 2 ** k == ranks else k + 2
    if algorithm == "dissemination":
        return int(math.ceil(math.log2(ranks)))
    raise TopoError(f"no step count for algorithm '{algorithm}'")


def allreduce_steps(algorithm, ranks):
    return program_steps("allreduce", algorithm, ranks)


def device_work(topo, per_step_us):
    """{"<op>_<algorithm>": us} of every graph-form row: its time less its steps."""
    out = {}
    for r in rows_of(topo, "gpu_collective", form="graph"):
        op, algorithm, ranks = r.get("op", "allreduce"), r.get("algorithm"), r.get("ranks", 0)
        if ranks < 2 or not isinstance(r.get("us"), (int, float)):
            continue
        try:
            steps = program_steps(op, algorithm, ranks)
        except TopoError:
            continue
        out[f"{op}_{algorithm}"] = (max(r["us"] - steps * per_step_us, 0.0), r["us"], steps)
    return out


def device_parameters(topo, flag_us):
    """The GPU program's parameters (floats in us and GB/s), None where not measured."""
    out = {"device_call": None, "device_launch_call": None, "device_step": None,
           "device_block_bandwidth": None}
    # Rows without "op" come from tca-topo before its allgather rows: allreduces.
    def allreduce_rows(form):
        return [r for r in rows_of(topo, "gpu_collective", form=form)
                if r.get("op", "allreduce") == "allreduce"]

    graph = {r["algorithm"]: r for r in allreduce_rows("graph")}
    calls = {"resident": [], "launch": []}
    for form in calls:
        for r in allreduce_rows(form):
            if r.get("algorithm") in graph:
                calls[form].append(r["us"] - graph[r["algorithm"]]["us"])
    for form, key in (("resident", "device_call"), ("launch", "device_launch_call")):
        if calls[form]:
            value = statistics.median(calls[form])
            if value < 0:
                raise TopoError(f"gpu_collective: the {form} form is faster than the graph's")
            out[key] = value
    if "ring" in graph and "recursive_doubling" in graph:
        ranks = graph["ring"].get("ranks", 0)
        if ranks >= 2:
            extra = (allreduce_steps("ring", ranks) -
                     allreduce_steps("recursive_doubling", ranks))
            if extra > 0:
                per_step = (graph["ring"]["us"] - graph["recursive_doubling"]["us"]) / extra
                out["device_step"] = max(per_step - flag_us, 0.0)
                out["work"] = device_work(topo, out["device_step"] + flag_us)
    stores = rows_of(topo, "block_store", blocks=1, threads=512)
    if stores:
        out["device_block_bandwidth"] = median_of(stores, "GBps", "block_store")
    return out


def fabric_text(topo, name, date):
    flag = median_of(rows_of(topo, "latency", measure="flag"), "latency_us", "latency (flag)")
    put = rows_of(topo, "latency", measure="put_signal")
    sm = median_of(rows_of(topo, "bandwidth", engine="sm", direction="one", source="random"),
                   "bandwidth_GBps", "bandwidth (sm, one direction)")
    ranks = int(topo.get("ranks", 0))
    if ranks < 2:
        raise TopoError("tca-topo JSON of fewer than 2 ranks has no pairs")
    device = device_parameters(topo, flag)
    put_note = (f" (put with signal: {median_of(put, 'latency_us', 'latency'):.3g} us)"
                if put else "")

    def value(key, unit, fmt="{:.4g}"):
        v = device[key]
        return "unmeasured" if v is None else fmt.format(v) + unit

    lines = [
        f"# {ranks} GPUs of one host, the path of tca's GPU programs (a kernel's stores into the",
        "# peer GPU), made by sim/topo_to_fabric.py from",
        f"#   [T] tca-topo --json ({topo.get('host', '?')}, {date or topo.get('date', '?')}): "
        "medians of the ordered pairs",
        f"name = {name}",
        "family = host",
        f"max_nodes = {ranks}",
        "sockets = 1",
        "switches_per_socket = 1",
        f"endpoints_per_switch = {ranks}",
        f"endpoint_bandwidth = {sm:.4g}GB/s     # [T] SM stores one direction (an inline step: "
        "twice its data)",
        f"endpoint_latency = {flag / 2:.3g}us         # [T] bare flag store one way {flag:.3g} us"
        f"{put_note}: two link crossings",
        f"switch_bandwidth = {sm:.4g}GB/s       # unused (one switch)",
        "switch_latency = 0.1us           # unused",
        f"socket_bandwidth = {sm:.4g}GB/s       # unused (one socket)",
        "socket_latency = 0.1us           # unused",
        "overhead = 0us                   # the inline store is the flag's flight",
        "synchronous = 0",
        "notify_overhead = 0us",
        "large_threshold = 1GiB",
        f"large_bandwidth = {sm:.4g}GB/s",
        f"device_call = {value('device_call', 'us')}    # [T] gpu_collective: resident less graph",
        f"device_launch_call = {value('device_launch_call', 'us')}    "
        "# [T] gpu_collective: launch less graph",
        f"device_step = {value('device_step', 'us')}    "
        "# [T] gpu_collective: graph, per step beyond recursive doubling, less the flag",
        f"device_block_bandwidth = {value('device_block_bandwidth', 'GB/s')}    "
        "# [T] block_store: 1 block of 512 threads",
    ]
    for program, (work, graph_us, steps) in sorted(device.get("work", {}).items()):
        lines.append(f"device_work_{program} = {work:.4g}us    # [T] gpu_collective: "
                     f"{program.replace('_', ' ', 1)}, graph {graph_us:.3g} us less {steps} "
                     f"step{'s' if steps != 1 else ''}")
    return "\n".join(lines) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("topo", help="the JSON tca-topo --json printed")
    parser.add_argument("--name", required=True, help="the fabric's name")
    parser.add_argument("--date", default="", help="the run's date (default: the JSON's)")
    args = parser.parse_args(argv)
    try:
        with open(args.topo, encoding="utf-8") as f:
            topo = json.load(f)
        if topo.get("benchmark") != "tca-topo":
            raise TopoError(f"{args.topo} is not tca-topo's JSON (benchmark "
                            f"{topo.get('benchmark')!r})")
        sys.stdout.write(fabric_text(topo, args.name, args.date))
    except (OSError, ValueError, TopoError) as error:
        print(f"topo_to_fabric: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
