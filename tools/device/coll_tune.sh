#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Tuning sweep of the GPU collectives' protocol and channel count (the TCA_COLL_PROTOCOL and
# TCA_COLL_CHANNELS overrides) on the GPU machine, from binaries staged by stage.sh; the numbers
# behind the defaults of src/coll/device_engine.cc.
# Usage: [TCA_RANKS=N] tools/device/coll_tune.sh MIN_BYTES MAX_BYTES PROTOCOL:CHANNELS ...
#   e.g. tools/device/coll_tune.sh 256K 16M simple:16 simple:64 ll:32
# Writes $OUT/tune_<collective>_<protocol>_<channels>.json and prints, per collective, size and
# setting, the fastest tca algorithm (CUDA-graph replay) beside NCCL's graph replay.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_MCA_btl_vader_single_copy_mechanism=cma
OUT=${OUT:-/tmp/tca-out}
mkdir -p "$OUT"
BIN="$PWD/.devbin"
export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
min=$1 max=$2
shift 2
for setting in "$@"; do
  export TCA_COLL_PROTOCOL=${setting%%:*} TCA_COLL_CHANNELS=${setting##*:}
  for collective in allreduce allgather; do
    impls=(-i tca.ring_graph -i tca.neighbor_exchange_graph -i tca.recursive_doubling_graph
           -i tca.direct_graph -i ref.nccl_graph)
    [[ $collective == allgather ]] && impls+=(-i tca.dissemination_graph)
    TCA_TIMEOUT_MS=10000 timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none \
      -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x OMPI_MCA_btl_vader_single_copy_mechanism \
      -x TCA_COLL_PROTOCOL -x TCA_COLL_CHANNELS -x TCA_TIMEOUT_MS -n "${TCA_RANKS:-2}" \
      "$BIN/bin/tca-coll" --memory gpu --json --collective "$collective" -b "$min" -e "$max" \
      -r 3 "${impls[@]}" > "$OUT/tune_${collective}_${setting/:/_}.json" 2> /dev/null ||
      echo "$collective $setting: rc=$?"
  done
done
python3 - "$OUT" <<'PY'
import glob, json, sys, collections
best = collections.defaultdict(dict)
for path in sorted(glob.glob(f"{sys.argv[1]}/tune_*.json")):
    setting = "_".join(path.rsplit("/", 1)[1][:-5].split("_")[2:])
    for row in json.load(open(path))["rows"]:
        key = (row["collective"], row["bytes"])
        name = "nccl" if row["impl"].startswith("ref.") else setting
        if row["wrong"] == 0 and (name not in best[key] or row["time_us"] < best[key][name][0]):
            best[key][name] = (row["time_us"], row["impl"][4:].replace("_graph", ""))
for (collective, size), by in sorted(best.items()):
    cells = " ".join(f"{k}={t:.1f}({a[:4]})" for k, (t, a) in sorted(by.items()))
    print(f"{collective:9} {size:>9} {cells}")
PY
