# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""Reading the reports: one Run per file, fields checked where a figure needs them."""
import json
import os


class ReportError(Exception):
    """A report cannot be drawn: the message names the file and what is wrong with it."""


class Run:
    """One program's JSON report: {"benchmark": name, fields..., "rows": [...], "notes": [...]}."""

    def __init__(self, path, document, label):
        self.path = path
        self.document = document
        self.label = label
        self.program = document["benchmark"]
        self.rows = document["rows"]

    def field(self, name):
        """A top-level field the figure cannot do without."""
        if name not in self.document:
            raise ReportError(f"{self.path}: missing field '{name}' (a {self.program} report has it)")
        return self.document[name]

    def row_field(self, index, row, name):
        if not isinstance(row, dict) or name not in row:
            raise ReportError(f"{self.path}: rows[{index}]: missing field '{name}' "
                              f"(needed for the {self.program} figures)")
        return row[name]

    def rows_with(self, names, rows=None):
        """The rows (all, or `rows` as (index, row) pairs) as dicts, each checked for `names`."""
        pairs = list(enumerate(self.rows)) if rows is None else rows
        for index, row in pairs:
            for name in names:
                self.row_field(index, row, name)
        return [row for _, row in pairs]

    def provenance(self):
        """Where, when and how the run was made, as far as its report says."""
        d = self.document
        where = []
        gpus = d.get("gpus")
        if isinstance(gpus, list) and gpus:
            names = sorted(set(gpus))
            where.append(", ".join(f"{gpus.count(n)}× {n}" for n in names))
        if d.get("cpu"):
            where.append(str(d["cpu"]))
        if d.get("device"):
            where.append(f"device {d['device']}")
        if d.get("host"):
            where.append(f"host {d['host']}")
        parts = ["; ".join(where) if where else "device not recorded",
                 str(d["date"]) if d.get("date") else "date not recorded",
                 f"`{d['command_line']}`" if d.get("command_line") else "command not recorded"]
        return f"{self.label} ({os.path.basename(self.path)}): " + "; ".join(parts)


# NVSHMEM's own ping-pong (../shared/tools/nvshmem-probe): results.jsonl, a JSON object a line.
PROBE = "nvshmem-probe"
PROBE_FIELDS = ("impl", "bytes", "latency_us")


def probe_document(path, handle):
    """nvshmem-probe's results.jsonl as a report of benchmark PROBE: its lines are the rows; the
    NVSHMEM version, GPUs and launcher of the first stand for the command line."""
    rows = []
    for number, line in enumerate(handle, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ReportError(f"{path}:{number}: not JSON: {error}") from None
        if not isinstance(row, dict):
            raise ReportError(f"{path}:{number}: not a JSON object")
        for name in PROBE_FIELDS:
            if name not in row:
                raise ReportError(f"{path}:{number}: missing field '{name}' (every {PROBE} line has it)")
        rows.append(row)
    if not rows:
        raise ReportError(f"{path}: no lines (an {PROBE} results.jsonl holds one per measurement)")
    first = rows[0]
    return {"benchmark": PROBE, "rows": rows,
            "command_line": f"{PROBE}: NVSHMEM {first.get('nvshmem', '?')}, GPUs {first.get('gpus', '?')}, "
                            f"{first.get('label', '?')}, {first.get('iters', '?')} round trips"}


def read_document(path):
    """The report in `path`: a program's JSON, or (a .jsonl file) nvshmem-probe's results."""
    try:
        with open(path, encoding="utf-8") as handle:
            if path.endswith(".jsonl"):
                return probe_document(path, handle)
            return json.load(handle)
    except OSError as error:
        raise ReportError(f"{path}: cannot read: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ReportError(f"{path}: not JSON: {error}") from None


def load(paths):
    """Runs of the files, each labelled by its file name (made unique)."""
    runs = []
    used = set()
    for path in paths:
        document = read_document(path)
        if not isinstance(document, dict):
            raise ReportError(f"{path}: not a report (a JSON object is expected)")
        for name in ("benchmark", "rows"):
            if name not in document:
                raise ReportError(f"{path}: missing field '{name}' (every tca report has it)")
        if not isinstance(document["rows"], list):
            raise ReportError(f"{path}: field 'rows' is not a list")
        label = os.path.splitext(os.path.basename(path))[0]
        base, n = label, 2
        while label in used:
            label, n = f"{base}-{n}", n + 1
        used.add(label)
        runs.append(Run(path, document, label))
    return runs
