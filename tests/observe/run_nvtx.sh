#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Runs a program's ranks under tca-run twice with an NVTX tool loaded (nvtx_recorder.cc, as
# Nsight Systems loads its own): with TCA_NVTX=1 every rank must have recorded each expected
# range in tca's domain, under its category, with pushes and pops balanced; without TCA_NVTX no
# rank may have recorded a range of tca's domain.
# Usage: run_nvtx.sh RANKS TCA_RUN RECORDER EXPECTED PROGRAM [ARGS...]
#   EXPECTED: space-separated CATEGORY:MESSAGE pairs (a message's spaces written as '_') that
#   every rank must have recorded; with a leading '+', at least one rank.
set -u
ranks=$1 tca_run=$2 recorder=$3 expected=$4
shift 4
dir=$(mktemp -d /tmp/tca-nvtx-XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/on" "$dir/off"

run() {  # run FOLDER [ENV...]: the ranks with the tool recording into FOLDER
  local folder=$1
  shift
  if ! env "$@" NVTX_INJECTION64_PATH="$recorder" NVTX_RECORD_DIR="$folder" \
      "$tca_run" -n "$ranks" "${PROGRAM[@]}" >"$folder.log" 2>&1; then
    cat "$folder.log"
    echo "FAIL: the ranks failed ($*)"
    exit 1
  fi
}
PROGRAM=("$@")

run "$dir/on" TCA_NVTX=1
records=("$dir"/on/nvtx-*.txt)
if [[ ! -e "${records[0]}" || ${#records[@]} -ne $ranks ]]; then
  echo "FAIL: with TCA_NVTX=1, $(ls "$dir/on" | wc -l) of $ranks ranks recorded NVTX calls"
  exit 1
fi
for record in "${records[@]}"; do
  echo "== $(basename "$record")"
  cat "$record"
  if grep -q '^unbalanced tca ' "$record"; then
    echo "FAIL: tca's ranges do not close: $(grep '^unbalanced tca ' "$record")"
    exit 1
  fi
  for pair in $expected; do
    [[ $pair == +* ]] && continue
    if ! grep -q "^range tca ${pair%%:*} ${pair#*:} [1-9]" "$record"; then
      echo "FAIL: no range '${pair#*:}' of category '${pair%%:*}' in tca's domain"
      exit 1
    fi
  done
done
for pair in $expected; do
  [[ $pair == +* ]] || continue
  pair=${pair#+}
  if ! cat "${records[@]}" | grep -q "^range tca ${pair%%:*} ${pair#*:} [1-9]"; then
    echo "FAIL: no rank recorded a range '${pair#*:}' of category '${pair%%:*}' in tca's domain"
    exit 1
  fi
done

run "$dir/off" -u TCA_NVTX
if cat "$dir"/off/nvtx-*.txt 2>/dev/null | grep -q '^range tca '; then
  echo "FAIL: without TCA_NVTX a rank recorded tca's ranges"
  exit 1
fi
echo "PASS: ${#records[@]} ranks recorded every expected range; none without TCA_NVTX"
