# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-pingpong: latency and bandwidth against message size, per path and memory kinds."""
from tca_report import plot, series

FIELDS = ("path", "src", "dst", "bytes", "latency_us", "bandwidth_GBps")


def figures(runs, out_dir):
    curves = {}  # kinds -> [(run index, label, name, points)] for latency and bandwidth
    for index, run in enumerate(runs):
        rows = run.rows_with(FIELDS)
        for row in rows:
            row["_name"] = row["impl"] + " " + row["path"] if "impl" in row else row["path"]
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
            entries = series.draw(ax, palette, curves.get((kinds, metric), []), len(runs) > 1)
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
                         "destination); ref.* curves (MPI, memcpy, CUDA, NCCL) dashed; "
                         "latency is half a round trip, bandwidth is size / latency", runs)))
    return made
