"""tca-topo: link, latency and bandwidth matrices as heat maps, halo planes, the automatic path.

Its rows each name their table: {"table": "link", "from", "to", "link"}, {"table": "latency",
"measure", "from", "to", "latency_us"}, {"table": "bandwidth", "engine", "direction", "source",
"from", "to", "bandwidth_GBps"}, {"table": "halo", "plane", "path", "mode",
"percent_of_contiguous"}, {"table": "auto_path", "to", "bytes", "ce_GBps", "sm_GBps", "pick"}.
"""
import re

import numpy as np

from tca_report import plot

SECTION = "GPU topology: tca-topo"
FIELDS = {
    "link": ("from", "to", "link"),
    "latency": ("measure", "from", "to", "latency_us"),
    "bandwidth": ("engine", "direction", "source", "from", "to", "bandwidth_GBps"),
    "halo": ("plane", "path", "mode", "percent_of_contiguous"),
    "auto_path": ("to", "bytes", "ce_GBps", "sm_GBps", "pick"),
}
MEASURES = {"put_signal": "GPU-initiated 8 B put with signal", "flag": "bare flag store (reference)"}


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


def heat(ax, grid, text, cmap, unit, vmin=None):
    shown = np.ma.masked_invalid(grid)
    image = ax.imshow(shown, cmap=cmap, vmin=vmin)
    size = grid.shape[0]
    ticks = list(range(size))
    ax.set_xticks(ticks, [f"rank {i}" for i in ticks], fontsize="small")
    ax.set_yticks(ticks, [f"rank {i}" for i in ticks], fontsize="small")
    ax.set_xlabel("to")
    ax.set_ylabel("from")
    small = "xx-small" if size > 6 else "small"
    for a in range(size):
        for b in range(size):
            ax.text(b, a, text(a, b), ha="center", va="center", fontsize=small)
    ax.figure.colorbar(image, ax=ax, shrink=0.8, label=unit)


def link_count(link):
    match = re.fullmatch(r"NV(\d+)", str(link))
    return float(match.group(1)) if match else 0.0


def figures(runs, out_dir):
    made, tables = [], []
    for run in runs:
        t = tables_of(run)
        suffix = "" if len(runs) == 1 else f"_{run.label}"
        if "link" in t:
            made.append(link_figure(run, t["link"], out_dir, suffix))
        if "latency" in t:
            made.append(matrix_figure(run, t["latency"], out_dir, f"topo_latency{suffix}.png",
                                      "measure", lambda r: MEASURES.get(r["measure"], r["measure"]),
                                      "latency_us", "one-way latency (µs)", "{:.2f}", "viridis",
                                      "One-way latency between GPUs", "half a round trip"))
        if "bandwidth" in t:
            made.append(matrix_figure(
                run, t["bandwidth"], out_dir, f"topo_bandwidth{suffix}.png", None,
                lambda r: f"{'copy engines' if r['engine'] == 'ce' else 'SM stores'}, "
                          f"{'one direction' if r['direction'] == 'one' else 'both directions at once'}"
                          f"{', constant-byte source' if r['source'] == 'constant' else ''}",
                "bandwidth_GBps", "bandwidth (GB/s)", "{:.0f}", "magma",
                "Bandwidth between GPUs", "256 MiB kicks"))
        if "halo" in t:
            made.append(halo_figure(run, t["halo"], out_dir, suffix))
        if "auto_path" in t:
            made.append(auto_figure(run, t["auto_path"], out_dir, suffix))
            tables.append(auto_table(run, t["auto_path"]))
    return made, tables


def link_figure(run, rows, out_dir, suffix):
    fig, (ax,) = plot.new_figure()
    grid = matrix(rows, lambda r: link_count(r["link"]) if r["from"] != r["to"] else np.nan)
    names = {(r["from"], r["to"]): str(r["link"]) for r in rows}
    heat(ax, grid, lambda a, b: "X" if a == b else names.get((a, b), ""), "Greens", "NVLink links (0: PCIe)",
         vmin=0)
    title = "Links between GPUs"
    ax.set_title(title)
    file = f"topo_links{suffix}.png"
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(
        "Link matrix from NVML: NV<n> is n NVLink links, anything else the PCIe distance; X marks a GPU "
        "itself", [run]))


def matrix_figure(run, rows, out_dir, file, _key, panel_of, field, unit, fmt, cmap, title, how):
    panels = {}
    for r in rows:
        panels.setdefault(panel_of(r), []).append(r)
    fig, axes = plot.new_figure(ncols=min(len(panels), 3), nrows=(len(panels) + 2) // 3)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax, (name, mine) in zip(axes, sorted(panels.items())):
        grid = matrix(mine, lambda r: r[field])
        heat(ax, grid, lambda a, b, g=grid: "-" if np.isnan(g[a, b]) else fmt.format(g[a, b]), cmap, unit)
        ax.set_title(name, fontsize="small")
    fig.suptitle(title)
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(f"{title} ({how}), rank to rank, one panel per "
                                                          "measure", [run]))


def halo_figure(run, rows, out_dir, suffix):
    fig, (ax,) = plot.new_figure()
    planes = []
    for r in rows:
        if r["plane"] not in planes:
            planes.append(r["plane"])
    kinds = []
    for r in rows:
        key = f"{r['path']} {r['mode']}"
        if key not in kinds:
            kinds.append(key)
    width = 0.8 / max(len(kinds), 1)
    for k, key in enumerate(kinds):
        values = {r["plane"]: r["percent_of_contiguous"] for r in rows if f"{r['path']} {r['mode']}" == key}
        ax.bar([i + k * width for i in range(len(planes))], [values.get(p, 0.0) for p in planes], width,
               label=key)
    ax.set_xticks([i + width * (len(kinds) - 1) / 2 for i in range(len(planes))], planes)
    ax.axhline(100, color="gray", linewidth=0.8)
    ax.set_xlabel("halo plane of the grid")
    ax.set_ylabel("rate, % of a contiguous transfer on the same path")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    title = "Halo planes, rank 0 to rank 1"
    ax.set_title(title)
    file = f"topo_halo{suffix}.png"
    plot.save(fig, out_dir, file)
    return plot.Figure(SECTION, file, title, plot.caption(
        "Halo planes of a cubic grid of doubles into a packed buffer, as % of a contiguous transfer of the "
        "same bytes on the same path; one: each kick waited for, piped: kicks back to back", [run]))


def auto_figure(run, rows, out_dir, suffix):
    fig, (ax,) = plot.new_figure()
    palette = plot.Palette()
    for peer in sorted({r["to"] for r in rows}):
        mine = sorted((r for r in rows if r["to"] == peer), key=lambda r: r["bytes"])
        xs = [r["bytes"] for r in mine]
        for field, name in (("ce_GBps", "copy engines"), ("sm_GBps", "SMs")):
            label = f"to rank {peer}: {name}"
            ax.plot(xs, [r[field] for r in mine], "-o", markersize=3.5, color=palette(label), label=label)
        picked = [r["ce_GBps"] if r["pick"] == "CE" else r["sm_GBps"] for r in mine]
        ax.plot(xs, picked, "s", markersize=9, markerfacecolor="none", color="black",
                label=f"to rank {peer}: automatic pick" if peer == min(r["to"] for r in rows) else None)
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
        "size, the engine picked circled", [run]))


def auto_table(run, rows):
    body = [[f"rank {r['to']}", plot.size_name(r["bytes"]), f"{r['ce_GBps']:.2f}", f"{r['sm_GBps']:.2f}",
             str(r["pick"])] for r in sorted(rows, key=lambda r: (r["to"], r["bytes"]))]
    return plot.Table(SECTION, "Automatic path per size", ["to", "size", "CE (GB/s)", "SM (GB/s)", "pick"], body,
                      plot.caption("TCA_PATH_CUDA's pick per size from rank 0 (a size between two rows takes the "
                                   "pick of the row above it)", [run]))
