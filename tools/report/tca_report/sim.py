"""tca-sim: modelled runs beside the measured ones they model, and the calibration table."""
from tca_report import coll, pingpong, plot, series

SECTION = "Models: tca-sim"
CALIBRATION_FIELDS = ("figure", "seed", "model", "error")
MEASURED_BESIDE = ("tca.auto", "tca.auto_graph", "ref.nccl", "ref.nccl_graph", "ref.mpi")


def is_calibration_row(row):
    return isinstance(row, dict) and "error" in row and "figure" in row


def split(run):
    """Row indices of one tca-sim run: (collective rows, ping-pong rows, calibration rows)."""
    parts = ([], [], [])
    for index, row in enumerate(run.rows):
        if coll.is_coll_row(row):
            parts[0].append((index, row))
        elif pingpong.is_pingpong_row(row):
            parts[1].append((index, row))
        else:
            run.rows_with(CALIBRATION_FIELDS, [(index, row)])
            parts[2].append((index, row))
    return parts


def figures(sim_runs, measured_coll, measured_pingpong, out_dir):
    made, tables = [], []
    calibration = [(run, run.rows_with(CALIBRATION_FIELDS, split(run)[2])) for run in sim_runs]
    calibration = [(run, rows) for run, rows in calibration if rows]
    if calibration:
        made.append(calibration_figure(calibration, out_dir))
        tables.append(calibration_table(calibration))
    modelled = [run for run in sim_runs if split(run)[0] or split(run)[1]]
    if modelled:
        made.append(overlay_figure(modelled, measured_coll, measured_pingpong, out_dir))
    return made, tables


def overlay_figure(sim_runs, measured_coll, measured_pingpong, out_dir):
    panels = {}  # panel title -> [(run index, label, name, points)]
    runs = sim_runs + measured_coll + measured_pingpong
    for index, run in enumerate(runs):
        is_sim = run in sim_runs
        coll_rows = split(run)[0] if is_sim else (list(enumerate(run.rows)) if run in measured_coll else [])
        pp_rows = split(run)[1] if is_sim else (list(enumerate(run.rows)) if run in measured_pingpong else [])
        rows = run.rows_with(coll.FIELDS, coll_rows)
        for row in rows:
            if is_sim or row["impl"] in MEASURED_BESIDE:
                name = row["impl"] if is_sim or not row["impl"].startswith("model.") else row["impl"]
                panels.setdefault(f"{row['collective']}: time per call (µs)", {}).setdefault(
                    (index, run.label, name), []).append((row["bytes"], row["time_us"]))
        rows = run.rows_with(pingpong.FIELDS, pp_rows)
        for row in rows:
            name = (row.get("impl", "model") + " " if is_sim else "") + row["path"]
            panels.setdefault(f"ping-pong {row['src']}>{row['dst']}: latency (µs)", {}).setdefault(
                (index, run.label, name), []).append((row["bytes"], row["latency_us"]))
    titles = sorted(panels)
    fig, axes = plot.new_figure(ncols=min(len(titles), 3), nrows=(len(titles) + 2) // 3)
    palette = plot.Palette()
    for ax in axes[len(titles):]:
        ax.set_visible(False)
    for ax, title in zip(axes, titles):
        curves = [(i, label, name, sorted(points)) for (i, label, name), points in panels[title].items()]
        entries = series.draw(ax, palette, curves, True)
        plot.size_axis(ax)
        plot.log_y(ax, title.split(": ", 1)[1])
        ax.set_title(title.split(": ", 1)[0], fontsize="small")
        ax.grid(True, alpha=0.3)
        plot.legend(ax, entries)
    title = "Modelled against measured"
    fig.suptitle(title)
    plot.save(fig, out_dir, "sim_vs_measured.png")
    return plot.Figure(SECTION, "sim_vs_measured.png", title, plot.caption(
        "tca-sim's modelled times (model.*, dotted) beside the measured runs given with them (tca.auto and the "
        "NCCL and MPI references of tca-coll, every path of tca-pingpong), against size", runs))


def calibration_figure(calibration, out_dir):
    fig, (ax,) = plot.new_figure()
    figures_, models = [], []
    for _, rows in calibration:
        for r in rows:
            if str(r["figure"]) not in figures_:
                figures_.append(str(r["figure"]))
            if str(r["model"]) not in models:
                models.append(str(r["model"]))
    width = 0.8 / max(len(models), 1)
    for k, model in enumerate(models):
        values = {}
        for _, rows in calibration:
            for r in rows:
                if str(r["model"]) == model:
                    values.setdefault(str(r["figure"]), []).append(abs(float(r["error"])) * 100)
        ax.bar([i + k * width for i in range(len(figures_))],
               [sum(values.get(f, [0])) / len(values.get(f, [0])) for f in figures_], width, label=model)
    ax.set_xticks([i + width * (len(models) - 1) / 2 for i in range(len(figures_))], figures_, fontsize="small",
                  rotation=20)
    ax.set_xlabel("measured figure the model was calibrated against")
    ax.set_ylabel("model error (|relative error|, %)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    title = "Calibration: model error per figure"
    ax.set_title(title)
    plot.save(fig, out_dir, "sim_calibration.png")
    return plot.Figure(SECTION, "sim_calibration.png", title, plot.caption(
        "tca-sim calibrate: the error of each model against each measured figure (relative error in %, the mean "
        "over seeds where there are several)", [run for run, _ in calibration]))


def calibration_table(calibration):
    body = []
    for run, rows in calibration:
        for r in rows:
            body.append([str(r["figure"]), str(r["seed"]), str(r["model"]), f"{float(r['error']):.4g}"])
    return plot.Table(SECTION, "Calibration", ["figure", "seed", "model", "error (relative)"], body,
                      plot.caption("tca-sim calibrate --json, as reported", [run for run, _ in calibration]))
