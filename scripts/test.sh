#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Finds or installs what the build and the tests need (scripts/common.sh), then builds and runs
# the test suite in two configurations: a release build with everything this machine has (MPI
# included) in build/, and the build without MPI (-DTCA_MPI=OFF: ranks start through tca-run and
# the tcp bootstrap) with AddressSanitizer + UBSan in build-asan/. The sanitized build leaves the
# CUDA transport out where no GPU is present (nothing of it could run there; the release build
# still compiles it), and its pass leaves out the cases labelled "large" (the collectives at 5-8
# ranks, the GPU suites at 3-4 and the ucx suite between fake hosts, which repeat on more ranks
# or hosts what the smaller ones check),
# "install" (packaging), "report" (Python) and "tree" (checks of the source files): they take
# most of its time and find nothing a sanitizer adds to. Exits non-zero on any failure.
# TCA_BUILD_DIR names another build directory than build/ (and <it>-asan for the second). Cases
# run side by side on hosts with many cores: up to half the cores' worth of ranks at once (ctest
# -j with each case's PROCESSORS; one at a time on 2 or 3 cores); TCA_TEST_JOBS sets that number.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_dir="${TCA_BUILD_DIR:-build}"

cores=$(nproc 2>/dev/null || echo 2)
jobs="${TCA_TEST_JOBS:-$(( cores / 2 > 1 ? cores / 2 : 1 ))}"
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
  echo "TCA_TEST_JOBS must be a positive whole number, not '$jobs'" >&2
  exit 2
fi

# run_suite DIR [CTEST_ARGS...]
run_suite() {
  local dir=$1
  shift
  say "ctest in $dir -j $jobs $*"
  # --no-tests=error: a suite that found nothing to run must not pass.
  (cd "$REPO_ROOT/$dir" && ctest --output-on-failure --no-tests=error -j "$jobs" "$@")
}

ensure_prerequisites test
# The Python package (python/) in the release build: its pytest suite runs under tca-run and
# mpirun (label "python"), its wheel is built and installed once (label "install").
python_option="$(ensure_python_package)"
configure "$build_dir" -DTCA_BUILD_TESTS=ON ${python_option:+"$python_option"}
build "$build_dir"
run_suite "$build_dir"
sanitized_cuda=()
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then sanitized_cuda=(-DTCA_CUDA=OFF); fi
configure "$build_dir-asan" -DTCA_BUILD_TESTS=ON -DTCA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTCA_MPI=OFF "${sanitized_cuda[@]}"
build "$build_dir-asan"
run_suite "$build_dir-asan" --label-exclude 'large|install|report|tree'
say "all tests passed ($build_dir, $build_dir-asan)"
