# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-cg: the time of a CG step split into its phases, per rank count, partition and --comm."""
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
        ranks, partition = run.field("ranks"), run.field("partition")
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
            label = f"{ranks} rank{'' if ranks == 1 else 's'}, {partition}\n--comm {row['comm']}"
            if device == "gpu" and "spmv" in row:
                label += f", {row['spmv']}"
            if len(runs) > 1:
                label += f"\n{run.label}"
            if row.get("repetition", 1) != 1:
                label += f" #{row['repetition']}"
            result.append((label, phases))
    return result


def figures(runs, out_dir):
    items = bars(runs)
    names = []
    for _, phases in items:
        for name, value in phases.items():
            if name not in names and (value > 0 or name != "reduce"):
                names.append(name)
    fig, (ax,) = plot.new_figure()
    bottoms = [0.0] * len(items)
    for name in names:
        values = [phases.get(name, 0.0) for _, phases in items]
        ax.bar(range(len(items)), values, bottom=bottoms, label=PHASE_NAMES.get(name, name))
        bottoms = [b + v for b, v in zip(bottoms, values)]
    ax.set_xticks(range(len(items)), [label for label, _ in items], fontsize="small")
    ax.set_xlabel("ranks, partition and --comm")
    ax.set_ylabel("time per CG step (µs, slowest rank per phase)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    problems = sorted({str(run.document.get("problem", "")) for run in runs})
    title = "CG: time per step by phase"
    fig.suptitle(f"{title} ({', '.join(p for p in problems if p)})")
    plot.save(fig, out_dir, "cg_breakdown.png")
    return [plot.Figure("Conjugate gradient: tca-cg", "cg_breakdown.png", title,
                        plot.caption("Time per CG step split into SpMV, DOT, AXPY, the exchange of p and the "
                                     "allreduces (each phase's slowest rank), stacked, one bar per rank count, "
                                     "partition and --comm", runs))]
