# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""The page: every figure and table with its caption, in sections, as Markdown."""
import os


def write(path, title, runs, items, notes):
    lines = [f"# {title}", "", "Reports drawn:", ""]
    for run in runs:
        lines.append(f"- {run.program}: {run.provenance()}")
        for note in run.document.get("notes", []) or []:
            lines.append(f"  - note: {note}")
    lines.append("")
    sections = []
    for item in items:
        if item.section not in sections:
            sections.append(item.section)
    for section in sections:
        lines += [f"## {section}", ""]
        for item in items:
            if item.section != section:
                continue
            if hasattr(item, "filename"):
                lines += [f"### {item.title}", "", f"![{item.title}]({item.filename})", "", item.caption, ""]
            else:
                lines += [f"### {item.title}", "", "| " + " | ".join(item.header) + " |",
                          "|" + "---|" * len(item.header)]
                lines += ["| " + " | ".join(row) + " |" for row in item.rows]
                lines += ["", item.caption, ""]
    if notes:
        lines += ["## Not drawn", ""] + [f"- {note}" for note in notes] + [""]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    return os.path.basename(path)
