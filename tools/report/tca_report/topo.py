# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-topo: link, latency and bandwidth matrices as heat maps, halo planes, the automatic path.

Its rows each name their table: {"table": "link", "from", "to", "link"}, {"table": "latency",
"measure", "from", "to", "latency_us"}, {"table": "bandwidth", "engine", "direction", "source",
"from", "to", "bandwidth_GBps"}, {"table": "halo", "plane", "path", "mode", "GBps",
"percent_of_contiguous"}, {"table": "auto_path", "to", "bytes", "ce_GBps", "sm_GBps", "pick"}.
A link is "NV<n>" (n NVLink links), a PCIe distance (PIX, PXB, PHB, NODE, SYS), "X" where both
ranks run on the same GPU, "net" across hosts or "?" where NVML cannot tell.
"""
import re

import numpy as np

from tca_report import plot
from tca_report.plot import plt

SECTION = "GPU topology: tca-topo"
FIELDS = {
    "link": ("from", "to", "link"),
    "latency": ("measure", "from", "to", "latency_us"),
    "bandwidth": ("engine", "direction", "source", "from", "to", "bandwidth_GBps"),
    "halo": ("plane", "path", "mode", "percent_of_contiguous"),
    "auto_path": ("to", "bytes", "ce_GBps", "sm_GBps", "pick"),
}
MEASURES = {"put_signal": "GPU-initiated 8 B put with signal", "flag": "bare flag store (reference)"}
PCIE = ("PIX", "PXB", "PHB", "NODE", "SYS")


def tables_of(run):
    """{table name: checked rows} of one run."""
    tables = {}
    for index, row in enumerate(run.rows):
        name = run.row_field(index, row, "table")
        if name not in FIELDS:
            continue
        run.rows_with(FIELDS[name], [(index, row)])
        tables.setdefault(name, []).append(row)
    return tables


def matrix(rows, value):
    size = max(max(r["from"], r["to"]) for r in rows) + 1
    grid = np.full((size, size), np.nan)
    for r in rows:
        grid[r["from"], r["to"]] = value(r)
    return grid


def heat(ax, grid, text, cmap, unit, vmin=None, vmax=None, blank="white"):
    """A heat map of `grid` (NaN cells in `blank`), each cell labelled in ink that reads on its
    color; the color bar only where some cell has a value."""
    colors = plt.get_cmap(cmap).with_extremes(bad=blank)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=colors, vmin=vmin, vmax=vmax)
    size = grid.shape[0]
    ticks = list(range(size))
    ax.set_xticks(ticks, [f"rank {i}" for i in ticks], fontsize="small")
    ax.set_yticks(ticks, [f"rank {i}" for i in ticks], fontsize="small")
    ax.set_xticks([i - 0.5 for i in range(1, size)], minor=True)
    ax.set_yticks([i - 0.5 for i in range(1, size)], minor=True)
    ax.tick_params(which="minor", length=0)
    ax.grid(True, which="minor", color="0.3", linewidth=0.8)
    ax.set_xlabel("to")
    ax.set_ylabel("from")
    small = "xx-small" if size > 6 else "small" if size > 4 else "large"
    for a in range(size):
        for b in range(size):
            ax.text(b, a, text(a, b), ha="center", va="center", fontsize=small, color=ink(image, grid[a, b]))
    if not np.all(np.isnan(grid)):
        ax.figure.colorbar(image, ax=ax, shrink=0.8, label=unit)


def ink(image, value):
    """Black on light cells (and blank ones), white on dark ones."""
    if np.isnan(value):
        return "black"
    red, green, blue, _ = image.to_rgba(value)
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"


def link_count(link):
    """NVLink links of a link entry: n for "NV<n>", 0 for a PCIe distance, NaN for anything else
    ("X": the same GPU, "net": another host, "?": unknown), which is no link count at all."""
    match = re.fullmatch(r"NV(\d+)", str(link))
    if match:
        return float(match.group(1))
    return 0.0 if str(link) in PCIE else np.nan


def link_text(link):
    return {"X": "X\nsame GPU", "net": "net\nother host", "?": "?\nnot known"}.get(link, link)


def shared_gpus(tables):
    """Pairs of distinct ranks whose link is "X": both run on one GPU."""
    return sorted({tuple(sorted((r["from"], r["to"]))) for r in tables.get("link", [])
                   if r["from"] != r["to"] and str(r["link"]) == "X"})


def sharing_note(pairs):
    if not pairs:
        return ""
    names = "; ".join(f"ranks {a} and {b}" for a, b in pairs)
    return (f"Same GPU (link X): {names}; between them the figures measure one GPU with itself, shared by "
            "both processes")


def figures(runs, out_dir):
    made, tables = [], []
    for run in runs:
        t = tables_of(run)
        suffix = "" if len(runs) == 1 else f"_{run.label}"
        note = sharing_note(shared_gpus(t))
        if "link" in t:
            made.append(link_figure(run, t["link"], out_dir, suffix, note))
        if "latency" in t:
            made.append(matrix_figure(run, t["latency"], out_dir, f"topo_latency{suffix}.png",
                                      lambda r: MEASURES.get(r["measure"], r["measure"]),
                                      lambda r: list(MEASURES).index(r["measure"]) if r["measure"] in MEASURES
                                      else len(MEASURES),
                                      ("latency_us", "one-way latency (µs)", "{:.2f}", "viridis"),
                                      "One-way latency between GPUs", "half a round trip", note))
        if "bandwidth" in t:
            made.append(matrix_figure(
                run, t["bandwidth"], out_dir, f"topo_bandwidth{suffix}.png",
                lambda r: f"{'copy engines' if r['engine'] == 'ce' else 'SM stores'}, "
                          f"{'one direction' if r['direction'] == 'one' else 'both directions at once'}"
                          f"{', constant-byte source' if r['source'] == 'constant' else ''}",
                lambda r: (r["engine"] != "ce", r["source"] == "constant", r["direction"] != "one"),
                ("bandwidth_GBps", "bandwidth (GB/s)", "{:.0f}", "magma"),
                "Bandwidth between GPUs", "256 MiB kicks", note))
        if "halo" in t:
            made.append(halo_figure(run, t["halo"], out_dir, suffix, note))
        if "auto_path" in t:
            made.append(auto_figure(run, t["auto_path"], out_dir, suffix))
            tables.append(auto_table(run, t["auto_path"]))
    return made, tables


def link_figure(run, rows, out_dir, suffix, note):
    fig, (ax,) = plot.new_figure()
    grid = matrix(rows, lambda r: link_count(r["link"]) if r["from"] != r["to"] else np.nan)
    names = {(r["from"], r["to"]): str(r["link"]) for r in rows}
    most = np.nanmax(grid) if not np.all(np.isnan(grid)) else 0.0
    heat(ax, grid, lambda a, b: "X" if a == b else link_text(names.get((a, b), "")), "Greens",
         "NVLink links (0: PCIe)", vmin=0, vmax=max(most, 1.0), blank="0.9")
    title = "Links between GPUs"
    ax.set_title(title)
    file = f"topo_links{suffix}.png"
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(
        "Link matrix from NVML: NV<n> is n NVLink links, PIX, PXB, PHB, NODE and SYS the PCIe distance "
        "(0 links), X the same GPU (a rank and itself, or two ranks on one GPU), net another host, "
        "? not known; cells without a link count are gray", [run], note))


def matrix_figure(run, rows, out_dir, file, panel_of, order, value, title, how, note):
    """A heat map per panel (`panel_of` names a row's panel, `order` sorts the panels); `value`
    is (field, unit, number format, color map)."""
    field, unit, fmt, cmap = value
    panels, keys = {}, {}
    for r in rows:
        panels.setdefault(panel_of(r), []).append(r)
        keys.setdefault(panel_of(r), order(r))
    fig, axes = plot.new_figure(ncols=min(len(panels), 3), nrows=(len(panels) + 2) // 3)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax, name in zip(axes, sorted(panels, key=lambda n: (keys[n], n))):
        grid = matrix(panels[name], lambda r: r[field])
        heat(ax, grid, lambda a, b, g=grid: "-" if np.isnan(g[a, b]) else fmt.format(g[a, b]), cmap, unit)
        ax.set_title(name, fontsize="small")
    fig.suptitle(title)
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(f"{title} ({how}), rank to rank, one panel per "
                                                          "measure", [run], note))


def first_seen(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def halo_figure(run, rows, out_dir, suffix, note):
    fig, (ax,) = plot.new_figure()
    planes = first_seen(r["plane"] for r in rows)
    kinds = first_seen(f"{r['path']} {r['mode']}" for r in rows)
    width = 0.8 / max(len(kinds), 1)
    rated = any("GBps" in r for r in rows)
    for k, key in enumerate(kinds):
        mine = {r["plane"]: r for r in rows if f"{r['path']} {r['mode']}" == key}
        xs = [i + k * width for i in range(len(planes))]
        bars = ax.bar(xs, [mine[p]["percent_of_contiguous"] if p in mine else 0.0 for p in planes], width,
                      label=key)
        if rated:
            ax.bar_label(bars, [f"{mine[p]['GBps']:.0f}" if p in mine and "GBps" in mine[p] else ""
                                for p in planes], fontsize="x-small", rotation=90, padding=2)
    ax.set_xticks([i + width * (len(kinds) - 1) / 2 for i in range(len(planes))], planes)
    ax.axhline(100, color="gray", linewidth=0.8)
    ax.margins(y=0.12)
    ax.set_xlabel("halo plane of the grid")
    ax.set_ylabel("rate, % of a contiguous transfer on the same path")
    ax.legend(fontsize="small", loc="lower left")
    ax.grid(True, axis="y", alpha=0.3)
    title = "Halo planes, rank 0 to rank 1"
    ax.set_title(title)
    file = f"topo_halo{suffix}.png"
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(
        "Halo planes of a cubic grid of doubles into a packed buffer, as % of a contiguous transfer of the "
        "same bytes on the same path" + (", GB/s over each bar" if rated else "") +
        "; one: each kick waited for, piped: kicks back to back", [run], note))


def calibration_groups(rows):
    """[(peers, rows by size)]: peers whose calibrations are identical share one entry (ranks on
    one GPU, or a rank and itself, can have the same calibration)."""
    groups = []
    for peer in sorted({r["to"] for r in rows}):
        mine = sorted((r for r in rows if r["to"] == peer), key=lambda r: r["bytes"])
        points = [(r["bytes"], r["ce_GBps"], r["sm_GBps"], r["pick"]) for r in mine]
        for peers, theirs in groups:
            if [(r["bytes"], r["ce_GBps"], r["sm_GBps"], r["pick"]) for r in theirs] == points:
                peers.append(peer)
                break
        else:
            groups.append(([peer], mine))
    return groups


def ranks_name(peers):
    return f"rank {peers[0]}" if len(peers) == 1 else "ranks " + ", ".join(str(p) for p in peers)


def auto_figure(run, rows, out_dir, suffix):
    fig, (ax,) = plot.new_figure()
    palette = plot.Palette()
    for n, (peers, mine) in enumerate(calibration_groups(rows)):
        xs = [r["bytes"] for r in mine]
        for field, name in (("ce_GBps", "copy engines"), ("sm_GBps", "SMs")):
            label = f"to {ranks_name(peers)}: {name}"
            ax.plot(xs, [r[field] for r in mine], "-o", markersize=3.5, color=palette(label), label=label)
        picked = [r["ce_GBps"] if r["pick"] == "CE" else r["sm_GBps"] for r in mine]
        ax.plot(xs, picked, "s", markersize=9, markerfacecolor="none", color="black",
                label="automatic pick" if n == 0 else None)
    plot.size_axis(ax)
    plot.log_y(ax, "ping-pong bandwidth (GB/s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    title = "Automatic path: the calibration's ping-pong and the pick per size"
    ax.set_title(title)
    file = f"topo_auto_path{suffix}.png"
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(
        "The calibration of TCA_PATH_CUDA from rank 0: ping-pong bandwidth of the copy engines and the SMs per "
        "size, the engine picked circled; peers with identical calibrations share one curve", [run]))


def auto_table(run, rows):
    body = [[ranks_name(peers), plot.size_name(r["bytes"]), f"{r['ce_GBps']:.2f}", f"{r['sm_GBps']:.2f}",
             str(r["pick"])] for peers, mine in calibration_groups(rows) for r in mine]
    return plot.Table(SECTION, "Automatic path per size", ["to", "size", "CE (GB/s)", "SM (GB/s)", "pick"], body,
                      plot.caption("TCA_PATH_CUDA's pick per size from rank 0 (a size between two rows takes the "
                                   "pick of the row above it); peers with identical calibrations share rows", [run]))
