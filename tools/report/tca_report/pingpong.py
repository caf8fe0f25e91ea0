# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-pingpong: latency and bandwidth against message size, per path and memory kinds; with
nvshmem-probe's results, NVSHMEM's ping-pongs beside the GPU-initiated paths."""
from tca_report import plot, series
from tca_report.data import PROBE_FIELDS, ReportError

FIELDS = ("path", "src", "dst", "bytes", "latency_us", "bandwidth_GBps")
# The probe's rows that are ping-pongs (put_bw is a bandwidth run of many blocks).
PROBE_PINGPONGS = ("nvshmem.p", "nvshmem.put_signal", "nvshmem.put_signal_block")
# tca's GPU-initiated path, NVSHMEM's ping-pong that does the same, and what both are.
PAIRS = (("cuda.device_put_signal_thread", "nvshmem.put_signal", "put with signal, one thread"),
         ("cuda.device_put_signal_block", "nvshmem.put_signal_block", "put with signal, a block"),
         ("cuda.device_put_inline", "nvshmem.p", "the smallest message: inline put / p"))


def probe_rows(run):
    """The probe's ping-pong rows as gpu>gpu rows of tca-pingpong's fields."""
    rows = []
    for index, row in enumerate(run.rows_with(PROBE_FIELDS)):
        if row["impl"] in PROBE_PINGPONGS:
            if not row["latency_us"] > 0:
                raise ReportError(f"{run.path}: line {index + 1}: latency_us is {row['latency_us']!r}, "
                                  "not a positive time")
            rows.append({"_name": row["impl"], "src": "gpu", "dst": "gpu", "bytes": row["bytes"],
                         "latency_us": row["latency_us"],
                         "bandwidth_GBps": row["bytes"] / row["latency_us"] / 1e3})
    return rows


def figures(runs, out_dir, probes=()):
    curves = {}  # kinds -> [(run index, label, name, points)] for latency and bandwidth
    everything = list(runs) + list(probes)
    for index, run in enumerate(everything):
        if index < len(runs):
            rows = run.rows_with(FIELDS)
            for row in rows:
                row["_name"] = row["impl"] + " " + row["path"] if "impl" in row else row["path"]
        else:
            rows = probe_rows(run)
        for kinds in sorted({f"{r['src']}>{r['dst']}" for r in rows}):
            mine = [r for r in rows if f"{r['src']}>{r['dst']}" == kinds]
            for metric in ("latency_us", "bandwidth_GBps"):
                for name, points in series.group(run, mine, lambda r: r["_name"], "bytes", metric).items():
                    curves.setdefault((kinds, metric), []).append((index, run.label, name, points))
    kinds_list = sorted({kinds for kinds, _ in curves})
    if not kinds_list:
        return []
    made = []
    for metric, title, unit, file in (
            ("latency_us", "Ping-pong latency against message size", "latency, half a round trip (µs)",
             "pingpong_latency.png"),
            ("bandwidth_GBps", "Ping-pong bandwidth against message size", "bandwidth (GB/s, 1 GB = 10^9 B)",
             "pingpong_bandwidth.png")):
        fig, axes = plot.new_figure(ncols=len(kinds_list))
        palette = plot.Palette()
        for ax, kinds in zip(axes, kinds_list):
            entries = series.draw(ax, palette, curves.get((kinds, metric), []), len(everything) > 1)
            plot.size_axis(ax)
            plot.log_y(ax, unit)
            ax.set_title(f"memory {kinds}", fontsize="medium")
            ax.grid(True, which="major", alpha=0.3)
            plot.legend(ax, entries)
        fig.suptitle(f"{title} (memory kinds: source > destination)")
        plot.save(fig, out_dir, file)
        made.append(plot.Figure(
            "Transfers: tca-pingpong", file, title,
            plot.caption(f"{title}: one curve per path, one panel per memory kinds (cpu or gpu, source > "
                         "destination); ref.* curves (MPI, memcpy, CUDA, NCCL) and nvshmem.* (NVSHMEM's "
                         "ping-pongs by its probe) dashed; latency is half a round trip, bandwidth is "
                         "size / latency", everything)))
    if runs and probes:
        made.append(beside_nvshmem(runs, probes))
    resident = resident_against_copy(runs)
    if resident is not None:
        made.append(resident)
    return made


def resident_against_copy(runs):
    """Table: the host-kicked resident path (cuda.resident) against the CUDA runtime's copy into
    the peer (ref.cuda_memcpy_peer), both gpu>gpu, at the sizes a run has both; None without."""
    body = []
    for run in runs:
        times = {}
        for row in run.rows_with(FIELDS):
            if row["src"] == "gpu" and row["dst"] == "gpu" and row["path"] in ("cuda.resident",
                                                                            "ref.cuda_memcpy_peer"):
                times[(row["path"], row["bytes"])] = row["latency_us"]
        for size in sorted({b for p, b in times if p == "cuda.resident"}):
            copy = times.get(("ref.cuda_memcpy_peer", size))
            if copy is None:
                continue
            mine = times[("cuda.resident", size)]
            body.append(([run.label] if len(runs) > 1 else []) +
                        [plot.size_name(size), f"{mine:.3f}", f"{copy:.3f}", f"{mine / copy:.3f}"])
    if not body:
        return None
    header = (["run"] if len(runs) > 1 else []) + [
        "size", "cuda.resident (µs)", "ref.cuda_memcpy_peer (µs)", "resident / copy"]
    return plot.Table(
        "Transfers: tca-pingpong", "The resident path against cudaMemcpy", header, body,
        plot.caption("One way, GPU to GPU: a host-kicked chain served by the resident kernel (cuda.resident) "
                     "against cudaMemcpyAsync into the peer's GPU, synchronized, then a notification "
                     "(ref.cuda_memcpy_peer), at the sizes the run has both", runs))


def beside_nvshmem(runs, probes):
    """Table: each GPU-initiated path of every tca-pingpong run beside the NVSHMEM ping-pong that
    does the same, at the sizes both measured, with tca's time over NVSHMEM's."""
    body = []
    for run in runs:
        for probe in probes:
            theirs = {}
            for row in probe_rows(probe):
                theirs[(row["_name"], row["bytes"])] = row["latency_us"]
            for path, impl, what in PAIRS:
                for row in sorted((r for r in run.rows_with(FIELDS)
                                   if r["path"] == path and r["src"] == "gpu" and r["dst"] == "gpu"),
                                  key=lambda r: r["bytes"]):
                    other = theirs.get((impl, row["bytes"]))
                    if other is None:
                        continue
                    ratio = row["latency_us"] / other
                    verdict = "ahead" if ratio < 0.9995 else "behind" if ratio > 1.0005 else "level"
                    label = [f"{run.label} / {probe.label}"] if len(runs) * len(probes) > 1 else []
                    body.append(label + [what, plot.size_name(row["bytes"]), f"{row['latency_us']:.3f}",
                                         f"{other:.3f}", f"{ratio:.3f}", verdict])
    header = (["runs"] if len(runs) * len(probes) > 1 else []) + [
        "form", "size", "tca (µs)", "NVSHMEM (µs)", "tca / NVSHMEM", "tca"]
    return plot.Table(
        "Transfers: tca-pingpong", "GPU-initiated puts beside NVSHMEM", header, body,
        plot.caption("One way (half a round trip), tca's GPU-initiated paths (cuda.device_put_signal_thread, "
                     "_block, cuda.device_put_inline) beside NVSHMEM's put_signal, put_signal_block and p as "
                     "its probe measures them, at the sizes both have; level: within 0.05%",
                     list(runs) + list(probes)))
