#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# tca-cg's strong-scaling table on one GPU machine (device kinds nvidia-h100-x2 / -x4,
# nvidia-h200-x2 / -x4), from binaries staged by apps/cg/scripts/stage.sh into .cgbin/: NPB
# classes on 1, 2 and 4 GPUs (as many as the machine has), every --comm in one invocation per
# rank count (MPI, the slow reference, over --reference-iterations of the class's iterations;
# tca with each --tca-exchange), 1d, and 2d on 4 GPUs; then Nsight Systems on one 2-GPU run
# (where its nsys can make a report: the one inside Nsight Compute on the image could not). Every
# run's JSON in $OUT/cg-scaling.tgz, the table in $OUT/table.txt (per CG step from the breakdown:
# SpMV, comm = exchange + reduce + allreduce, rest), one line per run in $OUT/summary.txt.
# Usage: apps/cg/scripts/strong_scaling.sh [BUDGET_S] [CLASSES] [STEPS]
#   BUDGET_S (default 540): a run that could end past that many seconds is skipped.
#   CLASSES (default "B C D"); STEPS (default "check one many nsys"): check = classes S and W on
#   2 GPUs with every tca exchange (one that fails is left out from then on), one = 1 GPU,
#   many = 2 and 4 GPUs, nsys = the profile. Extra tca-cg flags for every run in CG_FLAGS.
set -uo pipefail
BUDGET=${1:-540}
CLASSES=${2:-B C D}
STEPS=" ${3:-check one many nsys} "
wants() { [[ $STEPS == *" $1 "* ]]; }
# Never NVLink multicast on these shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_MCA_btl_vader_single_copy_mechanism=cma
export TCA_TIMEOUT_MS=${TCA_TIMEOUT_MS:-120000}
OUT=${OUT:-/tmp/cg-out}
LOGS="$OUT/cg-scaling"
mkdir -p "$LOGS"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
# shellcheck source=apps/cg/scripts/device_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
BIN="$PWD/.cgbin"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $dir ]] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$dir"
done
export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
if ! ldconfig -p | grep -q 'libnccl.so.2 '; then
  wheels=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
  [[ -n "$wheels" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$wheels/nccl/lib"
fi
CG="$BIN/bin/tca-cg"
record_machine
nvidia-smi topo -m > "$LOGS/machine.txt" 2>&1
ldd "$CG" | grep "not found" | tee -a "$SUMMARY"
GPUS=$(nvidia-smi -L | grep -c "^GPU")
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE
        -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS -x OMPI_MCA_btl_vader_single_copy_mechanism
        -x TCA_TIMEOUT_MS)
read -r -a EXTRA <<< "${CG_FLAGS:-}"

# run NAME RANKS LIMIT ARGS...: JSON in NAME.json, text in NAME.txt, a summary line.
run() {
  local name=$1 ranks=$2 limit=$3
  shift 3
  if (( SECONDS + limit > BUDGET )); then
    note "$name: skipped (${SECONDS} s used, limit $limit s, budget $BUDGET s)"
    return
  fi
  local begin=$SECONDS
  echo "# mpirun -n $ranks tca-cg $* ${EXTRA[*]}" > "$LOGS/$name.txt"
  timeout "$limit" "${MPIRUN[@]}" -n "$ranks" "$CG" "$@" "${EXTRA[@]}" > "$LOGS/$name.json" 2>> "$LOGS/$name.txt"
  local rc=$?
  LAST_RC=$rc
  local verdict
  verdict=$(grep -hoE "== comm [a-z]+|Verification +=  +[A-Z]+|Time in seconds =  +[0-9.]+|spmv: [0-9.]+ us per call, [0-9.]+ GB/s|skipped, .*|error: .*" "$LOGS/$name.txt" |
            sed 's/  */ /g' | tr '\n' ';')
  note "$name rc=$rc $((SECONDS - begin))s: $verdict"
}

# Seconds a run may take, by class and ranks (setup, NCCL start, the timed run and the
# breakdown run of each --comm, MPI's few iterations).
limit_of() {
  case $1 in
    B) echo 60 ;;
    C) echo 75 ;;
    D) (( $2 == 1 )) && echo 150 || echo 200 ;;
    *) echo 60 ;;
  esac
}
# MPI's outer iterations: all of them for the small classes.
reference_of() {
  case $1 in
    C) echo 15 ;;
    D) echo 6 ;;
    *) echo 0 ;;
  esac
}

G=(--device gpu --quiet --json)
COMMS=(--comm tca --comm nccl --comm mpi)
# Every tca exchange in every run of several GPUs; first all of them on small classes (short
# timeouts): an exchange that fails there is left out of the rest.
EXCHANGES=(push fused-dots fused coll)
exchange_flags() { TCA_X=(); for exchange in "${EXCHANGES[@]}"; do TCA_X+=(--tca-exchange "$exchange"); done; }
exchange_flags
if wants check && (( GPUS >= 2 )); then
  TCA_TIMEOUT_MS=15000 run check_S_np2 2 40 --class S "${G[@]}" --comm tca --comm nccl "${TCA_X[@]}"
  if (( LAST_RC != 0 )); then
    kept=(coll)
    for exchange in push fused-dots fused; do
      TCA_TIMEOUT_MS=15000 run "check_S_np2_$exchange" 2 30 --class S "${G[@]}" --comm tca --tca-exchange "$exchange"
      if (( LAST_RC != 0 )); then
        note "--tca-exchange $exchange failed its check: left out from here"
      else
        kept+=("$exchange")
      fi
    done
    EXCHANGES=("${kept[@]}")
    exchange_flags
  fi
  TCA_TIMEOUT_MS=15000 run check_W_np2 2 40 --class W "${G[@]}" --comm tca --comm nccl "${TCA_X[@]}"
  TCA_TIMEOUT_MS=15000 run check_W_np2_nograph 2 40 --class W "${G[@]}" --comm tca --no-graph "${TCA_X[@]}"
  # 2d needs 4 ranks: on fewer GPUs they share them (correctness only).
  TCA_TIMEOUT_MS=20000 run check_S_np4_2d 4 60 --class S "${G[@]}" --partition 2d --comm tca --comm mpi "${TCA_X[@]}"
fi
COMMS+=("${TCA_X[@]}")
for class in $CLASSES; do
  if wants one; then
    run "${class}_np1" 1 "$(limit_of "$class" 1)" --class "$class" "${G[@]}"
  fi
  if wants many; then
    for ranks in 2 4; do
      (( ranks > GPUS )) && continue
      run "${class}_np${ranks}_1d" "$ranks" "$(limit_of "$class" "$ranks")" --class "$class" "${G[@]}" \
        "${COMMS[@]}" --reference-iterations "$(reference_of "$class")"
      if (( ranks == 4 )); then
        run "${class}_np4_2d" 4 "$(limit_of "$class" 4)" --class "$class" "${G[@]}" --partition 2d \
          "${COMMS[@]}" --reference-iterations "$(reference_of "$class")"
      fi
    done
  fi
done

# The table: per run and --comm, the time, the breakdown per CG step and the communication share.
python3 - "$LOGS" > "$OUT/table.txt" <<'PY'
import json, sys, glob, os
print("| run | GPUs | partition | comm | verified | time (s) | SpMV (us/step) | comm (us/step) | rest (us/step) | step (us) | comm share | breakdown |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        doc = json.load(open(path))
    except Exception:
        continue
    for row in doc.get("rows", []):
        b = row.get("breakdown", {})
        per = {p["phase"]: p["per_step_us"] for p in b.get("phases", [])}
        spmv = per.get("spmv", 0.0)
        comm = sum(per.get(k, 0.0) for k in ("exchange", "reduce", "allreduce"))
        rest = sum(v for k, v in per.items() if k not in ("spmv", "exchange", "reduce", "allreduce"))
        step = spmv + comm + rest
        ver = row.get("verification", "successful" if row.get("verified") else "failed")
        time = f"{row['time_s']:.4f}"
        if row.get("iterations_run", row.get("niter")) != row.get("niter"):
            time += f" ({row['iterations_run']} it; {row['time_full_s']:.3f} scaled)"
        print(f"| {os.path.basename(path)[:-5]} | {doc.get('ranks')} | {doc.get('partition')} | {row['comm']}"
              f"{' ' + row['tca_exchange'] if 'tca_exchange' in row else ''} | {ver} | {time} | {spmv:.1f} | "
              f"{comm:.1f} | {rest:.1f} | {step:.1f} | {100 * comm / step if step else 0:.1f}% | "
              f"{'graph' if b.get('graph') else 'host'} |")
PY
cat "$OUT/table.txt"

# Nsight Systems: the kernels of one 2-GPU class C run (tca's exchanges and NCCL, graphs, no
# breakdown).
if wants nsys && (( GPUS >= 2 )); then
  NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems*/*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys \
    /usr/local/cuda/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
  if [[ -n "$NSYS" ]] && (( SECONDS + 90 < BUDGET )); then
    begin=$SECONDS
    timeout 90 "${MPIRUN[@]}" -n 2 "$NSYS" profile --trace cuda,nvtx --cuda-graph-trace node -o "$LOGS/nsys_C_np2_%q{OMPI_COMM_WORLD_RANK}" \
      "$CG" --class C --device gpu --quiet --no-breakdown --comm tca --comm nccl "${TCA_X[@]}" "${EXTRA[@]}" > "$LOGS/nsys_run.txt" 2>&1
    note "nsys rc=$? $((SECONDS - begin))s"
    note "nsys: $NSYS; $(ls "$LOGS" | grep nsys_C | tr '\n' ' ')"
    for rank in 0 1; do
      [[ -f "$LOGS/nsys_C_np2_$rank.nsys-rep" ]] &&
        timeout 60 "$NSYS" stats --report cuda_gpu_kern_sum --format csv -o "$LOGS/nsys_C_np2_$rank" \
          "$LOGS/nsys_C_np2_$rank.nsys-rep" >> "$LOGS/nsys_run.txt" 2>&1
      cp "$LOGS"/nsys_C_np2_${rank}*kern_sum*.csv "$OUT/nsys_kern_rank$rank.csv" 2>/dev/null
    done
    # Only the tables come back (the reports are too large).
    find "$LOGS" -type f ! -name '*.json' ! -name '*.txt' ! -name '*.csv' -delete
  else
    note "nsys: not found or no time left (${NSYS:-none})"
  fi
fi
note "done in ${SECONDS} s"
(cd "$OUT" && tar -czf cg-scaling.tgz cg-scaling && rm -rf cg-scaling)
