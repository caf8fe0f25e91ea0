# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""Curves against size: rows grouped into series, drawn in panels."""
from tca_report import plot


def group(run, rows, key, x_field, y_field):
    """{series name: sorted [(x, y)]} of `rows` (already checked) of `run`."""
    series = {}
    for row in rows:
        series.setdefault(key(row), []).append((row[x_field], row[y_field]))
    return {name: sorted(points) for name, points in series.items()}


def draw(ax, palette, curves, several_runs):
    """curves: [(run index, run label, series name, points)]. Returns the legend entries."""
    for run_index, label, name, points in curves:
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        shown = f"{label}: {name}" if several_runs else name
        ax.plot(xs, ys, plot.style_of(name.split(" ")[0]), color=palette(name),
                marker=plot.MARKERS[run_index % len(plot.MARKERS)], markersize=3.5,
                linewidth=1.3, label=shown)
    return len(curves)
