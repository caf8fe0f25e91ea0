# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
"""python -m tca.info: the release, the bootstrap, the transports per peer and memory kind,
AUTO's choice tables and the settings in force. Collective where started as a job
(tca-run -n 2 python -m tca.info); each rank prints its own view, rank 0 first."""
import argparse
import json
import sys

import tca


def gather():
    rank, size = tca.rank(), tca.size()
    name, reason = tca.bootstrap_info()
    kinds = ["cpu", "gpu"] if tca.HAS_CUDA and _has_gpu() else ["cpu"]
    peers = []
    for peer in range(size):
        row = {"peer": peer, "host_transport": tca.peer_transport(peer),
               "paths": [p for p in tca.PATHS if p != "auto" and tca.path_available(p, peer)],
               "auto": {}}
        for local in kinds:
            for remote in kinds:
                try:
                    choice, table = tca.auto_transport(peer, local, remote, 8)
                except tca.UnreachableError:
                    choice, table = "unreachable", ""
                row["auto"][f"{local}>{remote}"] = {"transport": choice, "table": table}
        peers.append(row)
    return {"version": tca.__version__, "rank": rank, "size": size, "bootstrap": name,
            "bootstrap_reason": reason, "cuda_build": tca.HAS_CUDA,
            "cuda_device": _device(), "timeout_ms": tca.get_timeout(), "peers": peers,
            "settings": [s for s in tca.settings()]}


def _has_gpu():
    try:
        tca.cuda_device()
        return True
    except tca.TcaError:
        return False


def _device():
    try:
        return tca.cuda_device()
    except tca.TcaError:
        return None


def show(info, out):
    print(f"tca {info['version']}: rank {info['rank']} of {info['size']}, "
          f"bootstrap {info['bootstrap']} ({info['bootstrap_reason']})", file=out)
    print(f"CUDA build: {info['cuda_build']}, device: {info['cuda_device']}, "
          f"timeout {info['timeout_ms']} ms", file=out)
    print(f"{'peer':>4}  {'host':6}  {'paths':32}  auto choice (8 B) and size table", file=out)
    for p in info["peers"]:
        choice = "; ".join(f"{k}: {v['transport']}" + (f" [{v['table']}]" if v["table"] else "")
                           for k, v in p["auto"].items())
        print(f"{p['peer']:>4}  {p['host_transport']:6}  {','.join(p['paths']):32}  {choice}",
              file=out)
    print("settings (* from the environment):", file=out)
    for s in info["settings"]:
        mark = "*" if s["from_environment"] else " "
        print(f" {mark} {s['name']:32} {s['value'] or '(unset)'}", file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tca.info", description=__doc__)
    parser.add_argument("--json", action="store_true", help="one JSON object per rank")
    args = parser.parse_args(argv)
    with tca.init():
        info = gather()
        for r in range(tca.size()):
            if r == tca.rank():
                if args.json:
                    print(json.dumps(info))
                else:
                    show(info, sys.stdout)
                sys.stdout.flush()
            tca.barrier()


if __name__ == "__main__":
    main()
