# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""What every figure shares: size, resolution, size axes, line styles, saving."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

WIDTH_IN, HEIGHT_IN, DPI = 12.0, 6.75, 100  # every figure is 1200 x 675 pixels
PIXELS = (int(WIDTH_IN * DPI), int(HEIGHT_IN * DPI))
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


class Figure:
    """A written figure: its file (relative to the output folder), title and caption."""

    def __init__(self, section, filename, title, caption):
        self.section = section
        self.filename = filename
        self.title = title
        self.caption = caption


class Table:
    """A Markdown table shown on the page under a section."""

    def __init__(self, section, title, header, rows, caption):
        self.section = section
        self.title = title
        self.header = header
        self.rows = rows
        self.caption = caption


def new_figure(ncols=1, nrows=1):
    fig, axes = plt.subplots(nrows, ncols, figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI,
                             squeeze=False, layout="constrained")
    return fig, [ax for row in axes for ax in row]


def save(fig, out_dir, filename):
    fig.savefig(os.path.join(out_dir, filename), dpi=DPI, format="png")
    plt.close(fig)


def size_name(value, _position=None):
    """8 -> '8 B', 4096 -> '4 KiB', 2**20 -> '1 MiB' (binary units, as the programs print)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} B"


def size_axis(ax, label="message size"):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=4))
    ax.xaxis.set_major_formatter(FuncFormatter(size_name))
    ax.set_xlabel(f"{label} (bytes, log scale)")
    ax.tick_params(axis="x", labelrotation=30)


def ranks_axis(ax, label):
    """A base-2 log x axis of counts (ranks), labelled 1, 2, 4, ..."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:g}"))
    ax.set_xlabel(label)


def log_y(ax, label):
    ax.set_yscale("log")
    ax.set_ylabel(f"{label}, log scale")


def style_of(name):
    """References (and NVSHMEM's probe) dashed, models dotted, tca solid."""
    if name.startswith("ref.") or name.startswith("nvshmem."):
        return "--"
    if name.startswith("model."):
        return ":"
    return "-"


class Palette:
    """The same color for the same series name in every panel of a figure."""

    def __init__(self):
        self.colors = {}
        self.cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"] + \
            [plt.cm.tab20(i) for i in range(1, 20, 2)] + [plt.cm.Dark2(i) for i in range(8)]

    def __call__(self, name):
        if name not in self.colors:
            self.colors[name] = self.cycle[len(self.colors) % len(self.cycle)]
        return self.colors[name]


def legend(ax, entries):
    if entries:
        ax.legend(fontsize="x-small", ncol=2 if entries > 12 else 1, loc="best")


def caption(what, runs, extra=""):
    """The caption: what the figure shows, then where, when and how each run was made."""
    text = what.rstrip(".") + "."
    if extra:
        text += " " + extra.rstrip(".") + "."
    return text + " " + " ".join(f"Run {run.provenance()}." for run in runs)
