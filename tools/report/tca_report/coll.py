# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-coll: time and bus bandwidth against size per implementation, NCCL and MPI beside."""
from tca_report import plot, series

FIELDS = ("collective", "impl", "bytes", "time_us", "busbw_GBps")


def figures(runs, out_dir):
    by_collective = {}
    for index, run in enumerate(runs):
        rows = run.rows_with(FIELDS)
        for collective in sorted({r["collective"] for r in rows}):
            mine = [r for r in rows if r["collective"] == collective]
            for metric in ("time_us", "busbw_GBps"):
                for name, points in series.group(run, mine, lambda r: r["impl"], "bytes", metric).items():
                    by_collective.setdefault(collective, {}).setdefault(metric, []).append(
                        (index, run.label, name, points))
    made = []
    for collective, curves in sorted(by_collective.items()):
        fig, axes = plot.new_figure(ncols=2)
        palette = plot.Palette()
        for ax, metric, unit in ((axes[0], "time_us", "time per call (µs)"),
                                 (axes[1], "busbw_GBps", "bus bandwidth (GB/s, nccl-tests' busbw)")):
            entries = series.draw(ax, palette, curves.get(metric, []), len(runs) > 1)
            plot.size_axis(ax, "result size")
            plot.log_y(ax, unit)
            ax.grid(True, which="major", alpha=0.3)
            if metric == "time_us":
                plot.legend(ax, entries)
        title = f"{collective}: time and bus bandwidth against size"
        fig.suptitle(title)
        file = f"coll_{collective}.png"
        plot.save(fig, out_dir, file)
        memories = sorted({str(run.document.get("memory", "?")) for run in runs if run.program == "tca-coll"})
        made.append(plot.Figure(
            "Collectives: tca-coll", file, title,
            plot.caption(f"{collective} time per call (left) and bus bandwidth (right) against the result size, "
                         "one curve per implementation: tca's algorithms and forms solid, NCCL and MPI (ref.*) "
                         "dashed", runs,
                         f"Buffers in {', '.join(memories)} memory" if memories else "")))
    return made
