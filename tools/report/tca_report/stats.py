# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-report --stats FILE... --out DIR: the counters of a run (TCA_STATS, one JSON per rank)
as a traffic matrix (bytes from rank to peer, every transport) and latency histograms."""
import json
import os

from tca_report.data import ReportError


def load_stats(paths):
    """{rank: counters} of the files; each must be one rank's TCA_STATS JSON."""
    ranks = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except OSError as error:
            raise ReportError(f"{path}: cannot read: {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise ReportError(f"{path}: not JSON: {error}") from None
        for name in ("rank", "size", "peers"):
            if not isinstance(document, dict) or name not in document:
                raise ReportError(f"{path}: missing field '{name}' (TCA_STATS files have it)")
        ranks[document["rank"]] = document
    return ranks


def traffic_matrix(ranks):
    """bytes[rank][peer] written by rank into peer (the 'out' cells, every transport), plus the
    bytes read from peer ('in') on the same row: what crossed from rank's side."""
    size = max(document["size"] for document in ranks.values())
    matrix = [[0] * size for _ in range(size)]
    for rank, document in ranks.items():
        for peer in document["peers"]:
            for cell in peer["out"].values():
                matrix[rank][peer["peer"]] += cell["bytes"]
            for cell in peer["in"].values():
                matrix[peer["peer"]][rank] += cell["bytes"]
    return matrix


def histogram(ranks, name):
    """{lower bound ns: count} summed over ranks and peers."""
    total = {}
    for document in ranks.values():
        for peer in document["peers"]:
            for bound, count in peer[name].items():
                total[int(bound)] = total.get(int(bound), 0) + count
    return dict(sorted(total.items()))


def figures(paths, out_dir):
    from tca_report.plot import Figure, new_figure, save

    ranks = load_stats(paths)
    matrix = traffic_matrix(ranks)
    fig, (ax,) = new_figure()
    image = ax.imshow(matrix, cmap="viridis")
    fig.colorbar(image, ax=ax, label="bytes")
    ax.set_xlabel("destination rank")
    ax.set_ylabel("source rank")
    ax.set_title("traffic matrix (bytes moved, every transport)")
    save(fig, out_dir, "stats_traffic.png")
    items = [Figure("counters", "stats_traffic.png", "Traffic matrix",
                    "Bytes moved from each rank (row) to each rank (column): puts and chains "
                    "counted by the writer, gets by the reader (TCA_STATS).")]
    fig, axes = new_figure(ncols=2)
    for ax, name, title in ((axes[0], "chain_latency_ns", "chains, puts and gets"),
                            (axes[1], "wait_latency_ns", "waits for notifications")):
        counts = histogram(ranks, name)
        if counts:
            ax.bar(range(len(counts)), list(counts.values()))
            ax.set_xticks(range(len(counts)), [_time(bound) for bound in counts], rotation=45)
        ax.set_xlabel("latency (bucket's lower bound)")
        ax.set_ylabel("count")
        ax.set_title(title)
    save(fig, out_dir, "stats_latency.png")
    items.append(Figure("counters", "stats_latency.png", "Latency histograms",
                        "Log-spaced latency buckets over every rank and peer (TCA_STATS)."))
    return items


def _time(ns):
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= scale:
            return f"{ns / scale:g} {unit}"
    return f"{ns} ns"


def write_page(path, items):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("# tca counters\n\n")
        for item in items:
            handle.write(f"## {item.title}\n\n![{item.title}]({item.filename})\n\n{item.caption}\n\n")
    return os.path.basename(path)
