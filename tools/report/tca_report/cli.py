# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-report FILE.json... --out DIR: figures (PNG) and a page (report.md) of tca's JSON reports."""
import argparse
import os
import shutil
import sys
import tempfile

from tca_report.data import PROBE, ReportError, load

PROGRAMS = ("tca-pingpong", "tca-coll", "tca-topo", "tca-bfs", "tca-cg", "tca-sim", PROBE)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        prog="tca-report",
        description="Draws the --json output of tca-pingpong, tca-coll, tca-topo, tca-bfs, tca-cg and tca-sim "
                    "(and nvshmem-probe's results.jsonl beside tca-pingpong's) as PNG figures with one Markdown "
                    "page (report.md) that shows them with their captions. Several files are overlaid in the "
                    "same figures.")
    parser.add_argument("files", nargs="+", metavar="FILE.json",
                        help="a program's --json output, or nvshmem-probe's results.jsonl (drawn beside "
                             "tca-pingpong's GPU-initiated paths)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the figures and report.md "
                        "(created; files of the same names are replaced)")
    parser.add_argument("--title", default="tca results", help="the page's title (default: %(default)s)")
    parser.add_argument("--stats", action="store_true",
                        help="the files are TCA_STATS counters (one per rank): draw the traffic matrix and "
                             "the latency histograms into stats.md. (--hang DIR, alone: merges the state "
                             "dumps of TCA_DUMP_FILE=DIR into who waits for what)")
    return parser.parse_args(argv)


def build(runs, out_dir):
    """Every figure and table of `runs`, written into out_dir. Returns (items, notes)."""
    from tca_report import bfs, cg, coll, pingpong, sim, topo

    by_program = {name: [run for run in runs if run.program == name] for name in PROGRAMS}
    for run in runs:
        if run.program not in PROGRAMS:
            raise ReportError(f"{run.path}: benchmark '{run.program}' is not one tca-report draws "
                              f"({', '.join(PROGRAMS)})")
    items, notes = [], []
    if by_program["tca-pingpong"] or by_program[PROBE]:
        items += pingpong.figures(by_program["tca-pingpong"], out_dir, by_program[PROBE])
    if by_program["tca-coll"]:
        items += coll.figures(by_program["tca-coll"], out_dir)
    if by_program["tca-topo"]:
        figures, tables = topo.figures(by_program["tca-topo"], out_dir)
        items += figures + tables
    if by_program["tca-bfs"]:
        items += bfs.figures(by_program["tca-bfs"], out_dir, notes)
    if by_program["tca-cg"]:
        items += cg.figures(by_program["tca-cg"], out_dir)
    if by_program["tca-sim"]:
        figures, tables = sim.figures(by_program["tca-sim"], by_program["tca-coll"], out_dir)
        items += figures + tables
    return items, notes


def _stats(files, out_dir):
    from tca_report import stats

    os.makedirs(out_dir, exist_ok=True)
    items = stats.figures(files, out_dir)
    stats.write_page(os.path.join(out_dir, "stats.md"), items)
    print(f"tca-report: {len(items)} figures and stats.md in {out_dir}")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--hang":  # no figures: needs no matplotlib
        if len(argv) != 2:
            print("usage: tca-report --hang DIR (the folder of TCA_DUMP_FILE)", file=sys.stderr)
            return 2
        from tca_report import hang
        return hang.main(argv[1])
    arguments = parse_arguments(argv)
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as error:
        print(f"tca-report: error: {error.name} is missing: install it (python3 -m pip install matplotlib, "
              "or the python3-matplotlib package)", file=sys.stderr)
        return 1
    from tca_report import page

    out_dir = os.path.abspath(arguments.out)
    parent = os.path.dirname(out_dir)
    try:
        os.makedirs(parent, exist_ok=True)
        if arguments.stats:
            return _stats(arguments.files, out_dir)
        runs = load(arguments.files)
        # Written into a scratch folder first: a report that fails leaves nothing half-written.
        scratch = tempfile.mkdtemp(prefix=".tca-report-", dir=parent)
        try:
            items, notes = build(runs, scratch)
            page.write(os.path.join(scratch, "report.md"), arguments.title, runs, items, notes)
            os.makedirs(out_dir, exist_ok=True)
            for name in sorted(os.listdir(scratch)):
                os.replace(os.path.join(scratch, name), os.path.join(out_dir, name))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    except ReportError as error:
        print(f"tca-report: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"tca-report: error: {error}", file=sys.stderr)
        return 1
    figures = [item for item in items if hasattr(item, "filename")]
    print(f"tca-report: {len(figures)} figures and report.md in {out_dir}")
    return 0
