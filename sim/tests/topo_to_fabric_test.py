#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""sim/topo_to_fabric.py: the description it makes from tca-topo's JSON.

Run by ctest (sim_topo_to_fabric, label sim) as: topo_to_fabric_test.py SIM_DIR [TCA_SIM]
(with TCA_SIM, the made file is loaded by tca-sim too)."""

import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

SIM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
TCA_SIM = sys.argv[2] if len(sys.argv) > 2 else ""
sys.path.insert(0, SIM)
import topo_to_fabric  # noqa: E402

DATA = os.path.join(SIM, "tests", "data", "topo-h200x4.json")


def values(text):
    """key -> value of a fabric file's lines."""
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            key, value = (part.strip() for part in line.split("=", 1))
            out[key] = value
    return out


def number(value):
    return float(re.match(r"[0-9.eE+-]+", value).group(0))


class TopoToFabricTest(unittest.TestCase):
    def setUp(self):
        with open(DATA, encoding="utf-8") as f:
            self.topo = json.load(f)

    def test_the_shipped_nvlink_descriptions_from_their_runs(self):
        """The tca-topo runs behind h200x4-nvlink-sm and h200x{4,2}-nvlink-programs give back their
        figures (within 1%), the GPU program's parameters from each run's gpu_collective and
        block_store tables."""
        runs = [(self.topo, "h200x4-nvlink-sm")]
        for ranks in (4, 2):
            with open(os.path.join(os.path.dirname(DATA), f"topo-h200x{ranks}-programs.json"),
                      encoding="utf-8") as f:
                runs.append((json.load(f), f"h200x{ranks}-nvlink-programs"))
        for topo, name in runs:
            with self.subTest(name=name):
                self.check_shipped(topo, name)

    def check_shipped(self, topo, name):
        made = values(topo_to_fabric.fabric_text(topo, name, ""))
        with open(os.path.join(SIM, "fabrics", name + ".fabric"), encoding="utf-8") as f:
            shipped = values(f.read())
        self.assertEqual(set(made), set(shipped))
        for key, value in shipped.items():
            if value == "unmeasured" or not value[0].isdigit():
                self.assertEqual(made[key], value, key)
            elif number(value) == 0:
                self.assertEqual(number(made[key]), 0, key)
            else:
                self.assertAlmostEqual(number(made[key]) / number(value), 1.0, delta=0.01,
                                       msg=key)

    def link_rows_only(self):
        """The run without its GPU program tables, for rows of a test's own."""
        topo = copy.deepcopy(self.topo)
        topo["rows"] = [r for r in topo["rows"]
                        if r.get("table") not in ("gpu_collective", "block_store")]
        return topo

    def test_gpu_program_rows_give_the_device_parameters(self):
        topo = self.link_rows_only()
        us = {("recursive_doubling", "resident"): 8.2, ("recursive_doubling", "launch"): 14.1,
              ("recursive_doubling", "graph"): 3.1, ("ring", "resident"): 14.4,
              ("ring", "launch"): 20.4, ("ring", "graph"): 9.3}
        for (algorithm, form), value in us.items():
            topo["rows"].append({"table": "gpu_collective", "op": "allreduce", "bytes": 8,
                                 "algorithm": algorithm, "ranks": 4, "protocol": "ll x1",
                                 "form": form, "us": value})
        for blocks, gbps in ((1, 31.0), (2, 60.0)):
            topo["rows"].append({"table": "block_store", "from": 0, "to": 1, "blocks": blocks,
                                 "threads": 512, "bytes": 64 << 20, "GBps": gbps})
        made = values(topo_to_fabric.fabric_text(topo, "x", ""))
        self.assertAlmostEqual(number(made["device_call"]), 5.1, delta=0.001)  # 5.1 and 5.1
        self.assertAlmostEqual(number(made["device_launch_call"]), 11.05, delta=0.001)
        # Ring 6 steps, recursive doubling 2 on 4 ranks: (9.3 - 3.1) / 4 less the 0.797 us flag.
        flag = number(made["endpoint_latency"]) * 2
        self.assertAlmostEqual(number(made["device_step"]), 1.55 - flag, delta=0.01)
        self.assertEqual(made["device_block_bandwidth"], "31GB/s")

    def test_work_by_collective_and_algorithm(self):
        topo = self.link_rows_only()
        us = {("allreduce", "recursive_doubling"): 3.1, ("allreduce", "ring"): 9.3,
              ("allreduce", "dissemination"): 6.1, ("allgather", "recursive_doubling"): 5.4,
              ("allgather", "ring"): 6.4, ("allgather", "dissemination"): 5.4}
        for (op, algorithm), value in us.items():
            for form, extra in (("graph", 0.0), ("resident", 5.0)):
                topo["rows"].append({"table": "gpu_collective", "op": op, "bytes": 8,
                                     "algorithm": algorithm, "ranks": 4, "protocol": "ll x1",
                                     "form": form, "us": value + extra})
        made = values(topo_to_fabric.fabric_text(topo, "x", ""))
        # The allgathers' rows leave the allreduce's parameters as they were.
        flag = number(made["endpoint_latency"]) * 2
        self.assertAlmostEqual(number(made["device_step"]), 1.55 - flag, delta=0.01)
        self.assertAlmostEqual(number(made["device_call"]), 5.0, delta=0.001)
        # Each program: its graph time less its steps at 1.55 us (device_step + the flag).
        expected = {"allreduce_recursive_doubling": 0.0, "allreduce_ring": 0.0,
                    "allreduce_dissemination": 6.1 - 2 * 1.55,
                    "allgather_recursive_doubling": 5.4 - 2 * 1.55,
                    "allgather_ring": 6.4 - 3 * 1.55,
                    "allgather_dissemination": 5.4 - 2 * 1.55}
        for program, work in expected.items():
            self.assertAlmostEqual(number(made["device_work_" + program]), work, delta=0.001,
                                   msg=program)
        # Without the ring and recursive doubling allreduces there is no step to subtract.
        topo["rows"] = [r for r in topo["rows"] if not (
            r.get("table") == "gpu_collective" and r.get("op") == "allreduce")]
        self.assertFalse(any(k.startswith("device_work") for k in
                             values(topo_to_fabric.fabric_text(topo, "x", ""))))

    def test_step_counts(self):
        self.assertEqual(topo_to_fabric.program_steps("allgather", "ring", 4), 3)
        self.assertEqual(topo_to_fabric.program_steps("allgather", "dissemination", 5), 3)
        self.assertEqual(topo_to_fabric.program_steps("allreduce", "dissemination", 4), 2)
        self.assertEqual(topo_to_fabric.allreduce_steps("ring", 4), 6)
        self.assertEqual(topo_to_fabric.allreduce_steps("recursive_doubling", 4), 2)
        self.assertEqual(topo_to_fabric.allreduce_steps("recursive_doubling", 6), 4)
        with self.assertRaises(topo_to_fabric.TopoError):
            topo_to_fabric.allreduce_steps("direct", 4)

    def test_errors_name_what_is_missing(self):
        no_flag = copy.deepcopy(self.topo)
        no_flag["rows"] = [r for r in no_flag["rows"] if r.get("measure") != "flag"]
        with self.assertRaisesRegex(topo_to_fabric.TopoError, "latency \\(flag\\)"):
            topo_to_fabric.fabric_text(no_flag, "x", "")
        faster = self.link_rows_only()
        for form, value in (("graph", 5.0), ("resident", 4.0)):
            faster["rows"].append({"table": "gpu_collective", "algorithm": "ring", "ranks": 4,
                                   "form": form, "us": value})
        with self.assertRaisesRegex(topo_to_fabric.TopoError, "faster than the graph"):
            topo_to_fabric.fabric_text(faster, "x", "")
        with tempfile.TemporaryDirectory() as folder:
            other = os.path.join(folder, "other.json")
            with open(other, "w", encoding="utf-8") as f:
                json.dump({"benchmark": "tca-coll", "rows": []}, f)
            self.assertEqual(topo_to_fabric.main([other, "--name", "x"]), 1)

    @unittest.skipUnless(TCA_SIM, "tca-sim not given")
    def test_tca_sim_loads_the_made_file(self):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "made.fabric"), "w", encoding="utf-8") as f:
                f.write(topo_to_fabric.fabric_text(self.topo, "made", ""))
            run = subprocess.run([TCA_SIM, "--fabrics", folder, "route", "--fabric", "made",
                                  "--nodes", "4", "--from", "0", "--to", "3"],
                                 capture_output=True, text=True, check=False)
            self.assertEqual(run.returncode, 0, run.stderr + run.stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
