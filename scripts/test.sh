#!/usr/bin/env bash
# Finds or installs what the build and the tests need (scripts/common.sh), then builds and runs
# the whole test suite twice: a release build in build/, and an AddressSanitizer + UBSan build in
# build-asan/. Exits non-zero on any failure. TCA_BUILD_DIR names another build directory than
# build/ (and <it>-asan for the second).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_dir="${TCA_BUILD_DIR:-build}"

run_suite() {
  say "ctest in $1"
  # --no-tests=error: a suite that found nothing to run must not pass.
  (cd "$REPO_ROOT/$1" && ctest --output-on-failure --no-tests=error)
}

ensure_prerequisites test
configure "$build_dir" -DTCA_BUILD_TESTS=ON
build "$build_dir"
run_suite "$build_dir"
configure "$build_dir-asan" -DTCA_BUILD_TESTS=ON -DTCA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
build "$build_dir-asan"
run_suite "$build_dir-asan"
say "all tests passed ($build_dir, $build_dir-asan)"
