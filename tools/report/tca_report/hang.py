# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""tca-report --hang DIR: merges the ranks' state dumps (TCA_DUMP_FILE=DIR, one JSON line per
dump in DIR/rank-R.dump.json; the last one counts) into "who is stuck on what"."""
import glob
import json
import os


class HangError(Exception):
    """The folder holds no dump that can be read: the message says why."""


def load_dumps(folder):
    """{rank: the rank's last dump} from DIR/rank-*.dump.json (or any *.json with dumps)."""
    paths = sorted(glob.glob(os.path.join(folder, "*.json")))
    if not paths:
        raise HangError(f"{folder}: no dumps (*.json); run with TCA_DUMP_FILE={folder}")
    dumps = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    dump = json.loads(line)
                except json.JSONDecodeError as error:
                    raise HangError(f"{path}:{number}: not a dump: {error}") from None
                if dump.get("tca_state") == 1:
                    dumps[dump["rank"]] = dump
    if not dumps:
        raise HangError(f"{folder}: no tca state dump in {len(paths)} file(s)")
    return dumps


def _ranks(ranks):
    return ", ".join(str(rank) for rank in sorted(ranks))


def _notification(dump, peer, slot):
    for entry in dump["notifications"]:
        if entry["peer"] == peer and entry["slot"] == slot:
            return entry
    return {"sent": 0, "received": 0, "consumed": 0}


def _doing(dump):
    """What a rank is doing, in words."""
    if dump["waits"]:
        wait = dump["waits"][0]
        source = "any rank" if wait["peer"] < 0 else f"rank {wait['peer']}"
        return f"waits for slot {wait['slot']} from {source} ({wait['for_ms']:.0f} ms)"
    if dump["collective"]:
        return f"is in collective #{dump['collective']['sequence']}"
    return "is not waiting in tca"


def _explain_wait(rank, wait, dumps, dead, lines):
    peer, slot = wait["peer"], wait["slot"]
    source = "any rank" if peer < 0 else f"rank {peer}"
    lines.append(f"rank {rank} waits for slot {slot} from {source}"
                 + (", which is dead" if peer in dead else "") + f" ({wait['for_ms']:.0f} ms)")
    if peer < 0 or peer in dead:
        return
    if peer not in dumps:
        lines.append(f"  rank {peer} left no dump: it may be outside tca or dead")
        return
    mine, theirs = dumps[rank], dumps[peer]
    awaited = _notification(mine, peer, slot)
    sent = _notification(theirs, rank, slot)["sent"]
    if sent > awaited["received"]:
        lines.append(f"  rank {peer} sent {sent} on slot {slot}, {awaited['received']} arrived: "
                     "in flight")
    elif sent <= awaited["consumed"]:
        lines.append(f"  rank {peer} never raised slot {slot} of rank {rank} "
                     f"(sent {sent}, rank {rank} consumed {awaited['consumed']})")
        for entry in theirs["notifications"]:
            if entry["peer"] != rank or entry["slot"] == slot:
                continue
            pending = entry["sent"] - _notification(mine, peer, entry["slot"])["consumed"]
            if pending > 0:
                lines.append(f"  rank {peer} raised slot {entry['slot']} of rank {rank} instead "
                             f"({pending} not consumed there)")
        kicked = [chain for chain in theirs["chains"]
                  if any(n["peer"] == rank and n["slot"] == slot for n in chain["notifies"])]
        for chain in kicked:
            lines.append(f"  rank {peer} kicked chain {chain['chain']} (channel {chain['channel']}) "
                         "that raises it; it has not completed")
        if not kicked:
            lines.append(f"  rank {peer} has no chain in flight that raises it; rank {peer} "
                         f"{_doing(theirs)}")


def _explain_collectives(dumps, size, lines):
    inside = {rank: dump["collective"] for rank, dump in dumps.items() if dump["collective"]}
    by_sequence = {}
    for rank, collective in inside.items():
        by_sequence.setdefault((collective["sequence"], collective["kind"]), []).append(rank)
    for (sequence, kind), ranks in sorted(by_sequence.items()):
        absent = [rank for rank in range(size) if rank not in ranks]
        steps = ", ".join(f"rank {rank} at step {inside[rank]['step']}" for rank in sorted(ranks))
        for rank in absent:
            if rank not in dumps:
                lines.append(f"rank {rank} (no dump) is not known to be in collective #{sequence} "
                             f"({kind}) that ranks {_ranks(ranks)} are in")
                continue
            other = dumps[rank]
            state = (f"it is in collective #{other['collective']['sequence']}" if other["collective"]
                     else f"it completed {other['collectives_completed']} and {_doing(other)}")
            lines.append(f"rank {rank} never entered collective #{sequence} ({kind}) that ranks "
                         f"{_ranks(ranks)} are in; {state}")
        lines.append(f"  collective #{sequence}: {steps}")


def diagnose(dumps):
    """The diagnosis as a list of lines."""
    size = max(dump["size"] for dump in dumps.values())
    lines = []
    missing = [rank for rank in range(size) if rank not in dumps]
    dead = {}
    for rank, dump in dumps.items():
        for peer in dump["dead_peers"]:
            dead.setdefault(peer, []).append(rank)
    for peer, seen_by in sorted(dead.items()):
        lines.append(f"rank {peer} is dead (seen by rank {_ranks(seen_by)})")
    if missing:
        lines.append(f"no dump from ranks {_ranks(missing)}" if len(missing) > 1
                     else f"no dump from rank {missing[0]}")
    _explain_collectives(dumps, size, lines)
    for rank in sorted(dumps):
        dump = dumps[rank]
        for wait in dump["waits"]:
            _explain_wait(rank, wait, dumps, dead, lines)
        if not dump["waits"] and not dump["collective"]:
            lines.append(f"rank {rank} is not waiting in tca ({dump['reason']})")
        for chain in dump["chains"]:
            age = "" if chain["age_ms"] is None else f", {chain['age_ms']:.0f} ms old"
            lines.append(f"  rank {rank}: chain {chain['chain']} on channel {chain['channel']} "
                         f"({chain['entries']} entries, peers {_ranks(chain['peers'])}, "
                         f"{chain['bytes']} B{age}) not drained")
    return lines


def main(folder):
    """Prints the diagnosis of the dumps in `folder`; 0, or 1 with a message."""
    import sys
    try:
        lines = diagnose(load_dumps(folder))
    except (HangError, OSError, KeyError) as error:
        print(f"tca-report: error: {error}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0

