# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-bfs: TEPS against scale per --comm, weak scaling, the time split per comm, per-level times."""
import math

from tca_report import plot

ROW_FIELDS = ("comm", "NBFS", "harmonic_mean_TEPS", "compute_time", "comm_flag_time", "comm_out_time",
              "comm_tree_time")
PHASES = (("compute_time", "compute"), ("comm_flag_time", "COMM.FLAG"), ("comm_out_time", "COMM.OUT"),
          ("comm_tree_time", "COMM.TREE"))
LEVEL_FIELDS = ("level", "compute_s", "flag_s", "out_s")
MAX_LEVEL_PANELS = 6


def figures(runs, out_dir, notes):
    checked = [(run, run.rows_with(ROW_FIELDS)) for run in runs]
    scales = {run.label: (run.field("SCALE"), run.field("num_mpi_processes")) for run in runs}
    made = [teps_figure(runs, checked, scales, out_dir), phases_figure(runs, checked, scales, out_dir)]
    weak = weak_scaling_figure(checked, scales, out_dir, runs)
    if weak:
        made.append(weak)
    else:
        notes.append("tca-bfs weak scaling: no --comm ran the same vertices per rank at two rank counts "
                     "(for example SCALE 24 on 1 rank and SCALE 26 on 4).")
    levels = levels_figure(runs, checked, out_dir)
    if levels:
        made.append(levels)
    else:
        notes.append("tca-bfs per-level times: no search has 'per_level' (run tca-bfs with --levels).")
    return made


def teps_figure(runs, checked, scales, out_dir):
    fig, (ax,) = plot.new_figure()
    palette = plot.Palette()
    lines = {}
    for run, rows in checked:
        scale, ranks = scales[run.label]
        device = run.document.get("device", "")
        for row in rows:
            name = f"--comm {row['comm']}, {ranks} ranks" + (f", {device}" if device else "")
            lines.setdefault(name, []).append((scale, row["harmonic_mean_TEPS"] / 1e9))
    for index, (name, points) in enumerate(sorted(lines.items())):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], "-", marker=plot.MARKERS[index % 10],
                color=palette(name), label=name)
    ax.set_xlabel("SCALE (the graph has 2^SCALE vertices)")
    ax.xaxis.get_major_locator().set_params(integer=True)
    plot.log_y(ax, "harmonic mean TEPS (GTEPS, 10^9 edges/s)")
    ax.grid(True, alpha=0.3)
    plot.legend(ax, len(lines))
    title = "BFS: TEPS against scale per --comm"
    fig.suptitle(title)
    plot.save(fig, out_dir, "bfs_teps.png")
    return plot.Figure("Graph500 BFS: tca-bfs", "bfs_teps.png", title,
                       plot.caption("Harmonic mean of the searches' TEPS (Graph500 output) against SCALE, one "
                                    "line per --comm, rank count and device; each point is one report", runs))


def per_rank_label(vertices):
    """2^k where the vertices per rank are a power of two, else the count."""
    exponent = math.log2(vertices) if vertices > 0 else 0.0
    return f"2^{int(exponent)}" if exponent.is_integer() else f"{vertices:g}"


def weak_scaling_points(checked, scales):
    """{(comm, vertices per rank, device): {ranks: GTEPS per rank}}, only where a line has two or more
    rank counts (a later report at the same point replaces an earlier one)."""
    lines = {}
    for run, rows in checked:
        scale, ranks = scales[run.label]
        device = run.document.get("device", "")
        for row in rows:
            key = (row["comm"], 2.0 ** scale / ranks, device)
            lines.setdefault(key, {})[ranks] = row["harmonic_mean_TEPS"] / 1e9 / ranks
    return {key: points for key, points in lines.items() if len(points) >= 2}


def weak_scaling_figure(checked, scales, out_dir, runs):
    lines = weak_scaling_points(checked, scales)
    if not lines:
        return None
    fig, (ax,) = plot.new_figure()
    palette = plot.Palette()
    for index, ((comm, per_rank, device), points) in enumerate(sorted(lines.items())):
        ranks = sorted(points)
        values = [points[r] for r in ranks]
        name = f"--comm {comm}, {per_rank_label(per_rank)} vertices per rank" + (f", {device}" if device else "")
        ax.plot(ranks, values, "-", marker=plot.MARKERS[index % 10], color=palette(name), label=name)
        for r, value in zip(ranks, values):  # efficiency against the line's fewest ranks
            ax.annotate(f"{value / values[0]:.2f}", (r, value), textcoords="offset points", xytext=(4, 6),
                        fontsize="x-small")
    plot.ranks_axis(ax, "ranks (the graph grows with them: SCALE = log2(vertices per rank × ranks))")
    ax.set_ylabel("harmonic mean TEPS per rank (GTEPS)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    plot.legend(ax, len(lines))
    title = "BFS: weak scaling, TEPS per rank at fixed vertices per rank"
    fig.suptitle(title)
    plot.save(fig, out_dir, "bfs_weak.png")
    return plot.Figure("Graph500 BFS: tca-bfs", "bfs_weak.png", title,
                       plot.caption("Harmonic mean TEPS divided by the ranks, against the ranks, one line per "
                                    "--comm, vertices per rank and device (reports with the same 2^SCALE / ranks); "
                                    "a flat line is perfect weak scaling, and each point is labelled with its "
                                    "ratio to the line's first point", runs))


def phases_figure(runs, checked, scales, out_dir):
    fig, (ax,) = plot.new_figure()
    labels, bottoms = [], []
    bars = {name: [] for _, name in PHASES}
    for run, rows in checked:
        scale, ranks = scales[run.label]
        for row in rows:
            searches = max(row["NBFS"], 1)
            labels.append(f"{row['comm']}\nSCALE {scale}, {ranks} ranks" + ("" if len(runs) == 1 else f"\n{run.label}"))
            for field, name in PHASES:
                bars[name].append(row[field] / searches * 1e3)
    bottoms = [0.0] * len(labels)
    for field, name in PHASES:
        ax.bar(range(len(labels)), bars[name], bottom=bottoms, label=name)
        bottoms = [b + v for b, v in zip(bottoms, bars[name])]
    ax.set_xticks(range(len(labels)), labels, fontsize="small")
    ax.set_ylabel("time per search (ms)")
    ax.set_xlabel("--comm, scale and ranks")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    title = "BFS: time per search, compute and COMM.FLAG / COMM.OUT / COMM.TREE"
    fig.suptitle(title)
    plot.save(fig, out_dir, "bfs_phases.png")
    return plot.Figure("Graph500 BFS: tca-bfs", "bfs_phases.png", title,
                       plot.caption("Mean time per search split into compute and the three communications "
                                    "(COMM.FLAG: frontier flags, COMM.OUT: outgoing vertices, COMM.TREE: the parent "
                                    "tree), stacked, one bar per --comm and report", runs))


def levels_figure(runs, checked, out_dir):
    panels = []
    for run, rows in checked:
        for index, row in enumerate(rows):
            searches = [s for s in row.get("searches", []) if isinstance(s, dict) and "per_level" in s]
            if not searches:
                continue
            sums = {}
            for s in searches:
                for j, level in enumerate(s["per_level"]):
                    for field in LEVEL_FIELDS:
                        if field not in level:
                            raise plot_error(run, index, j, field)
                    entry = sums.setdefault(level["level"], [0.0, 0.0, 0.0])
                    for k, field in enumerate(("compute_s", "flag_s", "out_s")):
                        entry[k] += level[field] / len(searches) * 1e6
            panels.append((run, row["comm"], len(searches), sums))
    if not panels:
        return None
    shown = panels[:MAX_LEVEL_PANELS]
    fig, axes = plot.new_figure(ncols=len(shown))
    for ax, (run, comm, count, sums) in zip(axes, shown):
        levels = sorted(sums)
        bottom = [0.0] * len(levels)
        for k, name in enumerate(("compute", "COMM.FLAG", "COMM.OUT")):
            values = [sums[level][k] for level in levels]
            ax.bar(levels, values, bottom=bottom, label=name)
            bottom = [b + v for b, v in zip(bottom, values)]
        ax.set_xlabel("BFS level")
        ax.set_ylabel("time per level, mean over searches (µs)")
        ax.set_title(f"{run.label}: --comm {comm} ({count} searches)", fontsize="small")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="x-small")
    title = "BFS: time per level"
    fig.suptitle(title)
    plot.save(fig, out_dir, "bfs_levels.png")
    extra = "" if len(panels) == len(shown) else f"The first {len(shown)} of {len(panels)} runs are shown"
    return plot.Figure("Graph500 BFS: tca-bfs", "bfs_levels.png", title,
                       plot.caption("Time of each BFS level (compute, COMM.FLAG, COMM.OUT stacked), the mean "
                                    "over the searches, one panel per --comm and report", runs, extra))


def plot_error(run, row_index, level_index, field):
    from tca_report.data import ReportError
    return ReportError(f"{run.path}: rows[{row_index}].searches[].per_level[{level_index}]: "
                       f"missing field '{field}'")
