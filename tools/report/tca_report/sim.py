# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-sim: calibration against the seed figures, a replayed run beside its measurement, and the
modelled patterns against the node count beside measured collectives."""
from tca_report import plot
from tca_report.data import ReportError

SECTION = "Models: tca-sim"
FORMS = {  # the field that tells a row's form, and the fields that form needs
    "figure": ("calibrate", ("figure", "seed", "model", "error")),
    "part": ("replay", ("impl", "part", "measured_s", "model_s")),
    "pattern": ("scale", ("impl", "pattern", "nodes", "time_us")),
}
MEASURED_BESIDE = ("tca.auto", "tca.auto_graph", "ref.mpi", "ref.nccl", "ref.nccl_graph")


def split(run):
    """{form: checked rows} of one tca-sim run."""
    forms = {}
    for index, row in enumerate(run.rows):
        key = next((k for k in FORMS if isinstance(row, dict) and k in row), None)
        if key is None:
            raise ReportError(f"{run.path}: rows[{index}]: missing field 'figure', 'part' or 'pattern' (the rows of "
                              "tca-sim calibrate, replay and scale)")
        form, fields = FORMS[key]
        run.rows_with(fields, [(index, row)])
        forms.setdefault(form, []).append(row)
    return forms


def figures(sim_runs, measured_coll, out_dir):
    made, tables = [], []
    for run in sim_runs:
        forms = split(run)
        suffix = "" if len(sim_runs) == 1 else f"_{run.label}"
        if "calibrate" in forms:
            made.append(calibration_figure(run, forms["calibrate"], out_dir, suffix))
            tables.append(calibration_table(run, forms["calibrate"]))
        if "replay" in forms:
            made.append(replay_figure(run, forms["replay"], out_dir, suffix))
        if "scale" in forms:
            made.append(scale_figure(run, forms["scale"], measured_coll, out_dir, suffix))
    return made, tables


def calibration_figure(run, rows, out_dir, suffix):
    fig, (ax,) = plot.new_figure()
    errors = [abs(float(r["error"])) * 100 for r in rows]
    colors = ["tab:green" if r.get("pass", True) else "tab:red" for r in rows]
    ax.barh(range(len(rows)), errors, color=colors)
    ax.set_yticks(range(len(rows)), [str(r["figure"]) for r in rows], fontsize="xx-small" if len(rows) > 25 else "small")
    ax.invert_yaxis()
    tolerance = run.document.get("tolerance")
    if isinstance(tolerance, (int, float)):
        ax.axvline(tolerance * 100, color="gray", linestyle="--", label=f"tolerance {tolerance * 100:g}%")
        ax.legend(fontsize="small")
    ax.set_xlabel("model error against the figure (|model − figure| / figure, %)")
    ax.grid(True, axis="x", alpha=0.3)
    title = "Calibration: the model against each figure"
    ax.set_title(title)
    file = f"sim_calibration{suffix}.png"
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(
        "tca-sim calibrate: the model's error against every seed and measured figure, within tolerance green, "
        "outside red", [run]))


def calibration_table(run, rows):
    body = []
    for r in rows:
        seed = f"{r['seed']:.4g}"
        if r.get("kind") == "range":
            seed += f"–{r.get('seed_high', 0):.4g}"
        elif r.get("kind") == "at_least":
            seed = "≥ " + seed
        body.append([str(r["figure"]), seed, f"{float(r['model']):.4g}", str(r.get("unit", "")),
                     f"{float(r['error']) * 100:.1f}", "yes" if r.get("pass", True) else "NO"])
    return plot.Table(SECTION, "Calibration", ["figure", "figure's value", "model", "unit", "error (%)", "within"],
                      body, plot.caption("tca-sim calibrate, every row as reported", [run]))


def replay_figure(run, rows, out_dir, suffix):
    fig, (ax,) = plot.new_figure()
    parts = [str(r["part"]) for r in rows]
    width = 0.4
    ax.bar([i - width / 2 for i in range(len(rows))], [r["measured_s"] * 1e3 for r in rows], width, label="measured")
    ax.bar([i + width / 2 for i in range(len(rows))], [r["model_s"] * 1e3 for r in rows], width,
           label=str(rows[0]["impl"]), hatch="//")
    for i, r in enumerate(rows):
        if r["measured_s"] > 0:
            ax.annotate(f"×{r['model_s'] / r['measured_s']:.2f}", (i + width / 2, r["model_s"] * 1e3),
                        ha="center", va="bottom", fontsize="small")
    ax.set_xticks(range(len(rows)), parts)
    ax.set_xlabel("part of the run (the slowest rank's total time in it)")
    ax.set_ylabel("time (ms)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    title = "Modelled against measured: a traced run replayed"
    ax.set_title(title)
    file = f"sim_replay{suffix}.png"
    plot.save(fig, out_dir, file)
    d = run.document
    return plot.Figure(SECTION, file, title, plot.caption(
        f"tca-sim replay of the trace {d.get('trace', '?')} ({d.get('ranks', '?')} ranks) on the fabric "
        f"{d.get('fabric', '?')}: the measured time of each part beside the model's, the ratio model / measured "
        "above each model bar", [run]))


def scale_figure(run, rows, measured_coll, out_dir, suffix):
    patterns = [p for p in dict.fromkeys(r["pattern"] for r in rows) if p != "pingpong"]
    fig, axes = plot.new_figure(ncols=min(max(len(patterns), 1), 2), nrows=(len(patterns) + 1) // 2 or 1)
    for ax in axes[len(patterns):]:
        ax.set_visible(False)
    palette = plot.Palette()
    measured_runs = []
    for ax, pattern in zip(axes, patterns):
        mine = [r for r in rows if r["pattern"] == pattern]
        curves = {}
        for r in mine:  # collectives: the best algorithm per node count; bfs and cg: the phases summed
            key = (r["impl"], r["nodes"])
            best = pattern in ("allreduce", "allgather")
            curves[key] = min(curves.get(key, r["time_us"]), r["time_us"]) if best else \
                curves.get(key, 0.0) + r["time_us"]
        for impl in dict.fromkeys(r["impl"] for r in mine):
            points = sorted((n, t) for (i, n), t in curves.items() if i == impl)
            ax.plot([p[0] for p in points], [p[1] for p in points], ":o", markersize=3.5, color=palette(impl),
                    label=impl)
        size = mine[0].get("bytes", 0)
        for index, coll in enumerate(measured_coll):
            ranks = coll.document.get("ranks")
            for r in coll.rows:
                if r.get("collective") == pattern and r.get("bytes") == size and r.get("impl") in MEASURED_BESIDE:
                    ax.plot([ranks], [r["time_us"]], plot.MARKERS[(index + 1) % 10], markersize=8,
                            color=palette(r["impl"]), label=f"{coll.label}: {r['impl']} (measured)")
                    if coll not in measured_runs:
                        measured_runs.append(coll)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes (log scale)")
        what = "best algorithm" if pattern in ("allreduce", "allgather") else "phases summed"
        plot.log_y(ax, f"time ({what}, µs)")
        ax.set_title(f"{pattern}" + (f", {plot.size_name(size)}" if size and pattern != "cg" else ""),
                     fontsize="small")
        ax.grid(True, alpha=0.3)
        plot.legend(ax, len(ax.get_lines()))
    title = "Modelled patterns against the node count"
    fig.suptitle(title)
    file = f"sim_scale{suffix}.png"
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(
        "tca-sim scale: the seeds' patterns modelled on each fabric (dotted) from 2 nodes up, the collectives at "
        "their best algorithm, BFS and CG as the sum of their phases; measured tca-coll rows of the same size "
        "(tca.auto, NCCL, MPI) marked at their rank count", [run] + measured_runs))
