#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-report on the fixtures: every figure kind is written as a valid, non-blank PNG of the
expected size, the page names every figure, and a report missing a field fails naming it.

Usage: test_report.py TCA_REPORT_SCRIPT. Exits 77 (skipped) where matplotlib or numpy is missing.
"""
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

try:
    import matplotlib.image
    import numpy
except ImportError as missing:
    print(f"skipped: {missing.name} is not installed (python3 -m pip install matplotlib)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
SCRIPT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "tools", "report", "tca-report")
WIDTH, HEIGHT = 1200, 675
REAL_TOPO = "topo_h200_shared_2ranks.json"  # tca-topo --json as printed, 2 ranks on one H200


def fixture(name):
    return os.path.join(FIXTURES, name)


def run_report(files, out):
    return subprocess.run([sys.executable, SCRIPT, *files, "--out", out], capture_output=True, text=True,
                          timeout=240)


def png_size(path):
    """(width, height) from a PNG's signature and IHDR chunk (its CRC checked)."""
    with open(path, "rb") as handle:
        data = handle.read(33)
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path}: not a PNG (signature)")
    length, kind = struct.unpack(">I4s", data[8:16])
    if kind != b"IHDR" or length != 13 or zlib.crc32(data[12:29]) != struct.unpack(">I", data[29:33])[0]:
        raise AssertionError(f"{path}: no valid IHDR chunk")
    return struct.unpack(">II", data[16:24])


class Figures(unittest.TestCase):
    def check_png(self, path):
        self.assertEqual(png_size(path), (WIDTH, HEIGHT), path)
        pixels = matplotlib.image.imread(path)  # decodes the whole file: a broken one raises
        self.assertEqual(pixels.shape[:2], (HEIGHT, WIDTH), path)
        flat = pixels.reshape(-1, pixels.shape[2])
        self.assertFalse(numpy.all(flat == flat[0]), f"{path}: blank (every pixel alike)")
        inked = numpy.count_nonzero(numpy.any(pixels[:, :, :3] < 0.5, axis=2))
        self.assertGreater(inked, WIDTH * HEIGHT // 200, f"{path}: almost nothing drawn")

    def draw(self, files, expected):
        with tempfile.TemporaryDirectory() as out:
            result = run_report([fixture(f) for f in files], out)
            self.assertEqual(result.returncode, 0, result.stderr)
            written = sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "*.png")))
            self.assertEqual(written, sorted(expected))
            with open(os.path.join(out, "report.md"), encoding="utf-8") as page:
                text = page.read()
            for name in expected:
                self.check_png(os.path.join(out, name))
                self.assertIn(f"]({name})", text)
            return text

    def test_pingpong(self):
        text = self.draw(["pingpong_cpu_2ranks.json"], ["pingpong_latency.png", "pingpong_bandwidth.png"])
        self.assertIn("tca-pingpong -b 8 -e 64K -f 8 -r 3 --json`", text)

    def test_pingpong_beside_nvshmem(self):
        text = self.draw(["pingpong_gpu_h200x2.json", "nvshmem_probe_h200x2.jsonl"],
                         ["pingpong_latency.png", "pingpong_bandwidth.png"])
        self.assertIn("### GPU-initiated puts beside NVSHMEM", text)
        self.assertIn("| put with signal, a block | 1 KiB | 2.064 | 2.084 | 0.991 | ahead |", text)
        self.assertIn("| put with signal, a block | 1 MiB | 25.439 | 25.347 | 1.004 | behind |", text)
        self.assertIn("| put with signal, one thread | 8 B | 1.909 | 2.021 | 0.945 | ahead |", text)
        self.assertIn("| the smallest message: inline put / p | 8 B | 0.692 | 1.278 | 0.541 | ahead |", text)
        self.assertNotIn("| 4 KiB | 12.", text)  # NVSHMEM's thread form stops at 1 KiB: no pair there
        self.assertIn("`nvshmem-probe: NVSHMEM 3.4.5, GPUs 0,1, mpirun+mpi, 10000 round trips`", text)
        # the resident path's gpu>gpu rows, not its cpu>gpu or gpu>cpu ones
        self.assertIn("| 8 B | 4.325 | 8.075 | 0.536 |", text)
        self.assertIn("| 1 MiB | 12.786 | 10.621 | 1.204 |", text)

    def test_nvshmem_alone(self):
        text = self.draw(["nvshmem_probe_h200x2.jsonl"], ["pingpong_latency.png", "pingpong_bandwidth.png"])
        self.assertNotIn("beside NVSHMEM", text)
        self.assertNotIn("resident path against", text)

    def test_collectives(self):
        self.draw(["coll_cpu_2ranks.json"], ["coll_allreduce.png", "coll_allgather.png"])

    def test_topology(self):
        text = self.draw([REAL_TOPO], ["topo_links.png", "topo_latency.png", "topo_bandwidth.png", "topo_halo.png",
                                       "topo_auto_path.png"])
        self.assertIn("`build-dev/tools/tca-topo --json`", text)
        self.assertIn("Same GPU (link X): ranks 0 and 1;", text)
        self.assertIn("GB/s over each bar", text)
        self.assertIn("| ranks 0, 1 | 256 MiB | 2000.33 | 1794.00 | CE |", text)
        self.assertNotIn("| rank 1 |", text)

    def test_topology_two_runs(self):
        text = self.draw(["topo_h200x8_8ranks.json", REAL_TOPO],
                         [f"topo_{kind}_{label}.png"
                          for label in ("topo_h200x8_8ranks", "topo_h200_shared_2ranks")
                          for kind in ("links", "latency", "bandwidth", "halo")] +
                         ["topo_auto_path_topo_h200_shared_2ranks.png"])
        self.assertEqual(text.count("Same GPU (link X)"), 4)

    def test_topology_links(self):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(SCRIPT))))
        from tca_report import topo
        self.assertEqual(topo.link_count("NV18"), 18.0)
        for pcie in ("PIX", "PXB", "PHB", "NODE", "SYS"):
            self.assertEqual(topo.link_count(pcie), 0.0)
        for none in ("X", "net", "?"):
            self.assertTrue(numpy.isnan(topo.link_count(none)), none)
        with open(fixture(REAL_TOPO), encoding="utf-8") as handle:
            rows = json.load(handle)["rows"]
        auto = [r for r in rows if r["table"] == "auto_path"]
        self.assertEqual([peers for peers, _ in topo.calibration_groups(auto)], [[0, 1]])
        auto[-1]["sm_GBps"] += 1.0
        self.assertEqual([peers for peers, _ in topo.calibration_groups(auto)], [[0], [1]])

    def test_bfs_several_scales(self):
        self.draw(["bfs_scale8_2ranks.json", "bfs_scale10_2ranks.json"],
                  ["bfs_teps.png", "bfs_phases.png", "bfs_levels.png"])

    def test_bfs_weak_scaling(self):
        """GPU runs of 2^24 vertices per rank on 1 and 4 ranks: the weak-scaling figure, no per-level one."""
        text = self.draw(["bfs_scale24_1gpu.json", "bfs_scale26_4gpus.json"],
                         ["bfs_teps.png", "bfs_phases.png", "bfs_weak.png"])
        self.assertIn("weak scaling", text)
        self.assertIn("no search has 'per_level'", text)
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(SCRIPT))))
        from tca_report import bfs
        self.assertEqual(bfs.per_rank_label(2.0 ** 24), "2^24")
        self.assertEqual(bfs.per_rank_label(3.0e6), "3e+06")

    def test_cg(self):
        self.draw(["cg_classS_1rank.json", "cg_classS_2ranks.json", "cg_classS_4ranks_2d.json"],
                  ["cg_breakdown.png"])

    def test_cg_kernel_times(self):
        """A GPU run with --kernel-times and --no-breakdown: the kernels' figure, no breakdown of zeros."""
        text = self.draw(["cg_classC_4ranks_kernel_times.json"], ["cg_kernels.png"])
        self.assertIn("--kernel-times", text)

    def test_models(self):
        text = self.draw(["sim_calibrate.json", "sim_replay_cg_2ranks.json", "sim_scale_peach2_peach3.json",
                          "coll_cpu_2ranks.json"],
                         ["coll_allreduce.png", "coll_allgather.png", "sim_calibration_sim_calibrate.png",
                          "sim_replay_sim_replay_cg_2ranks.png", "sim_scale_sim_scale_peach2_peach3.png"])
        self.assertIn("| PEACH2 PIO CPU->CPU 8 B latency | 0.9 | 0.9083 | us | 0.9 | yes |", text)

    def test_provenance_in_captions(self):
        with tempfile.TemporaryDirectory() as out:
            with open(fixture("pingpong_cpu_2ranks.json"), encoding="utf-8") as handle:
                document = json.load(handle)
            document.update({"date": "2026-11-23T23:00:00Z", "host": "h", "cpu": "a CPU", "gpus": ["NVIDIA H200"],
                             "command_line": "tca-pingpong --json"})
            path = os.path.join(out, "with_provenance.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(document, handle)
            result = run_report([path], os.path.join(out, "figures"))
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(out, "figures", "report.md"), encoding="utf-8") as page:
                text = page.read()
            self.assertIn("1× NVIDIA H200; a CPU; host h; 2026-11-23T23:00:00Z; `tca-pingpong --json`", text)
            for field in ("date", "host", "cpu", "gpus", "command_line"):
                document.pop(field)
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(document, handle)
            result = run_report([path], os.path.join(out, "bare"))
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(out, "bare", "report.md"), encoding="utf-8") as page:
                self.assertIn("device not recorded; date not recorded; command not recorded", page.read())


class Counters(unittest.TestCase):
    """--stats draws TCA_STATS files; --hang merges state dumps (the hung jobs of tests/observe
    check the diagnosis of real dumps)."""

    def test_stats_figures(self):
        files = [fixture("stats_pingpong_rank0.json"), fixture("stats_pingpong_rank1.json")]
        with tempfile.TemporaryDirectory() as out:
            result = subprocess.run([sys.executable, SCRIPT, "--stats", *files, "--out", out],
                                    capture_output=True, text=True, timeout=240)
            self.assertEqual(result.returncode, 0, result.stderr)
            for name in ("stats_traffic.png", "stats_latency.png"):
                Figures.check_png(self, os.path.join(out, name))
            with open(os.path.join(out, "stats.md"), encoding="utf-8") as page:
                self.assertIn("](stats_traffic.png)", page.read())

    def test_stats_missing_field(self):
        with tempfile.TemporaryDirectory() as out:
            broken = os.path.join(out, "broken.json")
            with open(broken, "w", encoding="utf-8") as handle:
                json.dump({"rank": 0, "size": 2}, handle)
            result = subprocess.run([sys.executable, SCRIPT, "--stats", broken, "--out", out],
                                    capture_output=True, text=True, timeout=240)
            self.assertEqual(result.returncode, 1)
            self.assertIn("missing field 'peers'", result.stderr)

    def test_hang_without_dumps(self):
        with tempfile.TemporaryDirectory() as folder:
            result = subprocess.run([sys.executable, SCRIPT, "--hang", folder], capture_output=True,
                                    text=True, timeout=60)
            self.assertEqual(result.returncode, 1)
            self.assertIn("no dumps", result.stderr)


class MissingFields(unittest.TestCase):
    def fails_naming(self, name, edit, field):
        with tempfile.TemporaryDirectory() as out:
            with open(fixture(name), encoding="utf-8") as handle:
                document = json.load(handle)
            edit(document)
            path = os.path.join(out, "broken.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(document, handle)
            target = os.path.join(out, "figures")
            result = run_report([path], target)
            self.assertEqual(result.returncode, 1, result.stdout)
            self.assertIn(f"'{field}'", result.stderr)
            self.assertIn("broken.json", result.stderr)
            self.assertFalse(os.path.exists(target), "a failed report wrote its folder")

    def test_pingpong_row(self):
        self.fails_naming("pingpong_cpu_2ranks.json", lambda d: d["rows"][3].pop("latency_us"), "latency_us")

    def test_collective_row(self):
        self.fails_naming("coll_cpu_2ranks.json", lambda d: d["rows"][0].pop("busbw_GBps"), "busbw_GBps")

    def test_bfs_scale(self):
        self.fails_naming("bfs_scale8_2ranks.json", lambda d: d.pop("SCALE"), "SCALE")

    def test_bfs_level(self):
        self.fails_naming("bfs_scale8_2ranks.json",
                          lambda d: d["rows"][0]["searches"][0]["per_level"][1].pop("flag_s"), "flag_s")

    def test_cg_kernel_times_fields(self):
        self.fails_naming("cg_classC_4ranks_kernel_times.json",
                          lambda d: d["rows"][0]["kernel_times"]["kernels"][1].pop("peer_wait_per_step_us"),
                          "peer_wait_per_step_us")

    def test_cg_breakdown(self):
        self.fails_naming("cg_classS_2ranks.json", lambda d: d["rows"][1].pop("breakdown"), "breakdown")

    def test_topo_matrix_cell(self):
        self.fails_naming("topo_h200x8_8ranks.json", lambda d: d["rows"][60].pop("to"), "to")
        self.fails_naming(REAL_TOPO, lambda d: d["rows"][4].pop("latency_us"), "latency_us")

    def test_topo_halo_and_auto_path_rows(self):
        self.fails_naming(REAL_TOPO, lambda d: d["rows"][18].pop("percent_of_contiguous"), "percent_of_contiguous")
        self.fails_naming(REAL_TOPO, lambda d: d["rows"][-1].pop("pick"), "pick")

    def test_calibration_row(self):
        self.fails_naming("sim_calibrate.json", lambda d: d["rows"][-1].pop("error"), "error")

    def test_replay_row(self):
        self.fails_naming("sim_replay_cg_2ranks.json", lambda d: d["rows"][1].pop("model_s"), "model_s")

    def test_rows(self):
        self.fails_naming("cg_classS_1rank.json", lambda d: d.pop("rows"), "rows")

    def probe_fails(self, edit, expected):
        """A broken copy of the probe's results.jsonl (its lines edited) fails with `expected`."""
        with tempfile.TemporaryDirectory() as out:
            with open(fixture("nvshmem_probe_h200x2.jsonl"), encoding="utf-8") as handle:
                lines = handle.read().splitlines()
            path = os.path.join(out, "broken.jsonl")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("\n".join(edit(lines)) + "\n")
            target = os.path.join(out, "figures")
            result = run_report([path], target)
            self.assertEqual(result.returncode, 1, result.stdout)
            self.assertIn(expected, result.stderr)
            self.assertFalse(os.path.exists(target), "a failed report wrote its folder")

    def test_probe_line(self):
        def drop_latency(lines):
            row = json.loads(lines[4])
            row.pop("latency_us")
            return lines[:4] + [json.dumps(row)] + lines[5:]
        self.probe_fails(drop_latency, "broken.jsonl:5: missing field 'latency_us'")
        self.probe_fails(lambda lines: lines[:2] + ["{not json"] + lines[2:], "broken.jsonl:3: not JSON")
        self.probe_fails(lambda lines: [], "broken.jsonl: no lines")

        def zero_latency(lines):
            row = json.loads(lines[0])
            row["latency_us"] = 0
            return [json.dumps(row)] + lines[1:]
        self.probe_fails(zero_latency, "broken.jsonl: line 1: latency_us is 0, not a positive time")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
