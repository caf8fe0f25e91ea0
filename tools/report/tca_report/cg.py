# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-cg: the time of a CG step split into its phases (the breakdown) and into its kernels (--kernel-times), per
rank count, partition and --comm; the NPB time against the GPU count (strong scaling)."""
from tca_report import plot
from tca_report.data import ReportError

ROW_FIELDS = ("comm", "time_s", "breakdown")
PHASE_FIELDS = ("phase", "per_step_us")
PHASE_NAMES = {"spmv": "SpMV", "dot": "DOT", "axpy": "AXPY", "exchange": "exchange", "reduce": "reduce",
               "allreduce": "allreduce"}


def bars(runs):
    """[(label, {phase: µs per step})] of every row of every run."""
    result = []
    for run in runs:
        device = run.document.get("device", "")
        for index, row in enumerate(run.rows_with(ROW_FIELDS)):
            breakdown = row["breakdown"]
            if not isinstance(breakdown, dict) or "phases" not in breakdown:
                raise ReportError(f"{run.path}: rows[{index}].breakdown: missing field 'phases'")
            phases = {}
            for j, phase in enumerate(breakdown["phases"]):
                for field in PHASE_FIELDS:
                    if field not in phase:
                        raise ReportError(f"{run.path}: rows[{index}].breakdown.phases[{j}]: missing field '{field}'")
                phases[phase["phase"]] = phase["per_step_us"]
            if not any(phases.values()):
                continue  # --no-breakdown: nothing was measured
            label = run_label(run, row)
            if device == "gpu" and "spmv" in row:
                label += f", {row['spmv']}"
            if len(runs) > 1:
                label += f"\n{run.label}"
            if row.get("repetition", 1) != 1:
                label += f" #{row['repetition']}"
            result.append((label, phases))
    return result


def scaling_series(runs):
    """{class: {series: {GPUs: seconds}}} from the rows that give the time over all of the class's
    iterations (time_full_s: a reference run over fewer iterations is scaled to them); the best
    of repetitions."""
    series = {}
    for run in runs:
        cls, ranks, partition = run.document.get("class"), run.document.get("ranks"), run.document.get("partition")
        if cls is None or ranks is None:
            continue
        for row in run.document.get("rows", []):
            if "time_full_s" not in row or "comm" not in row:
                continue
            name = row["comm"]
            if row.get("tca_exchange"):
                name += f" {row['tca_exchange']}"
            if partition == "2d" and ranks > 1:
                name += ", 2d"
            if row.get("iterations_run", row.get("niter")) != row.get("niter"):
                name += " (scaled)"
            times = series.setdefault(cls, {}).setdefault(name if ranks > 1 else "1 GPU", {})
            times[ranks] = min(times.get(ranks, float("inf")), row["time_full_s"])
    return {cls: s for cls, s in series.items() if len({r for t in s.values() for r in t}) > 1}


def scaling_figure(runs, out_dir):
    """Strong scaling: time against GPUs per --comm (and tca exchange), a panel per class; the one-GPU
    time starts every curve."""
    series = scaling_series(runs)
    if not series:
        return []
    fig, axes = plot.new_figure(ncols=len(series))
    for ax, (cls, by_name) in zip(axes, sorted(series.items())):
        one = by_name.get("1 GPU", {}).get(1)
        for k, (name, times) in enumerate(sorted(by_name.items())):
            if name == "1 GPU":
                continue
            points = dict(times)
            if one is not None:
                points.setdefault(1, one)
            xs = sorted(points)
            ax.plot(xs, [points[x] for x in xs], marker=plot.MARKERS[k % len(plot.MARKERS)],
                    linestyle="--" if name.startswith(("nccl", "mpi")) else "-", label=name)
        if one is not None:
            most = max(r for t in by_name.values() for r in t)
            ax.plot([1, most], [one, one / most], color="grey", linestyle=":", label="ideal")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sorted({r for t in by_name.values() for r in t}))
        ax.get_xaxis().set_major_formatter(plot.FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel("GPUs (ranks)")
        ax.set_ylabel("NPB time (s, log scale)")
        ax.set_title(f"class {cls}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small")
    fig.suptitle("CG: strong scaling")
    plot.save(fig, out_dir, "cg_scaling.png")
    return [plot.Figure("Conjugate gradient: tca-cg", "cg_scaling.png", "CG: strong scaling",
                        plot.caption("NPB CG time against the number of GPUs, one curve per --comm (and tca "
                                     "exchange), starting from the one-GPU run of the same class; MPI runs over "
                                     "fewer iterations scaled to the class's count; dotted: ideal", runs))]


KERNEL_FIELDS = ("kernel", "per_step_us", "peer_wait_per_step_us", "gap_before_per_step_us")


def run_label(run, row):
    ranks, partition = run.field("ranks"), run.field("partition")
    label = f"{ranks} rank{'' if ranks == 1 else 's'}, {partition}\n--comm {row['comm']}"
    if row.get("tca_exchange"):
        label += f" {row['tca_exchange']}"
    return label


def kernel_bars(runs):
    """[(label, {segment: µs per step})] of the rows with kernel_times (--kernel-times): each
    kernel's own work, the waits for the peers inside kernels, and the gaps between kernels."""
    result = []
    for run in runs:
        for index, row in enumerate(run.document.get("rows", [])):
            times = row.get("kernel_times")
            if times is None:
                continue
            if "kernels" not in times:
                raise ReportError(f"{run.path}: rows[{index}].kernel_times: missing field 'kernels'")
            segments, waits, gaps = {}, 0.0, 0.0
            for j, kernel in enumerate(times["kernels"]):
                for field in KERNEL_FIELDS:
                    if field not in kernel:
                        raise ReportError(f"{run.path}: rows[{index}].kernel_times.kernels[{j}]: missing field '{field}'")
                segments[kernel["kernel"]] = kernel["per_step_us"] - kernel["peer_wait_per_step_us"]
                waits += kernel["peer_wait_per_step_us"]
                gaps += kernel["gap_before_per_step_us"]
            segments["waiting for peers"] = waits
            segments["gaps between kernels"] = max(gaps, 0.0)
            label = run_label(run, row) + (f"\n{run.label}" if len(runs) > 1 else "")
            result.append((label, segments))
    return result


# The kernels' figure's two summary segments, in greys apart from the kernels' colour cycle.
SUMMARY_STYLE = {"waiting for peers": {"color": "0.35", "hatch": "//"},
                 "gaps between kernels": {"color": "0.8"}}


def stacked(ax, items, names, labels):
    bottoms = [0.0] * len(items)
    for name in names:
        values = [segments.get(name, 0.0) for _, segments in items]
        ax.bar(range(len(items)), values, bottom=bottoms, label=labels.get(name, name),
               **SUMMARY_STYLE.get(name, {}))
        bottoms = [b + v for b, v in zip(bottoms, values)]
    ax.set_xticks(range(len(items)), [label for label, _ in items], fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")


def kernels_figure(runs, out_dir):
    """The kernels of a CG step as they timed themselves, a bar per row with kernel_times."""
    items = kernel_bars(runs)
    if not items:
        return []
    names = []
    for _, segments in items:
        names += [name for name in segments if name not in names and name not in
                  ("waiting for peers", "gaps between kernels")]
    names += ["waiting for peers", "gaps between kernels"]
    fig, (ax,) = plot.new_figure()
    stacked(ax, items, names, {})
    ax.set_xlabel("ranks, partition and --comm")
    ax.set_ylabel("time per CG step (µs, slowest rank per figure)")
    title = "CG: the kernels of a step, by their own clocks"
    fig.suptitle(title)
    plot.save(fig, out_dir, "cg_kernels.png")
    return [plot.Figure("Conjugate gradient: tca-cg", "cg_kernels.png", title,
                        plot.caption("Time per CG step of each kernel of the engine (its work less its blocks' "
                                     "waits for the peers), the waits for the peers inside the kernels, and the "
                                     "gaps between kernels (where NCCL's or tca's collective kernels and launch "
                                     "latency sit), from --kernel-times, one bar per run", runs))]


def figures(runs, out_dir):
    return breakdown_figure(runs, out_dir) + scaling_figure(runs, out_dir) + kernels_figure(runs, out_dir)


def breakdown_figure(runs, out_dir):
    items = bars(runs)
    if not items:
        return []
    names = []
    for _, phases in items:
        for name, value in phases.items():
            if name not in names and (value > 0 or name != "reduce"):
                names.append(name)
    fig, (ax,) = plot.new_figure()
    stacked(ax, items, names, PHASE_NAMES)
    ax.set_xlabel("ranks, partition and --comm")
    ax.set_ylabel("time per CG step (µs, slowest rank per phase)")
    problems = sorted({str(run.document.get("problem", "")) for run in runs})
    title = "CG: time per step by phase"
    fig.suptitle(f"{title} ({', '.join(p for p in problems if p)})")
    plot.save(fig, out_dir, "cg_breakdown.png")
    return [plot.Figure("Conjugate gradient: tca-cg", "cg_breakdown.png", title,
                        plot.caption("Time per CG step split into SpMV, DOT, AXPY, the exchange of p and the "
                                     "allreduces (each phase's slowest rank), stacked, one bar per rank count, "
                                     "partition and --comm", runs))]
