#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole test suite twice: a release build in
# build/, and an AddressSanitizer + UBSan build in build-asan/. Exits non-zero on any failure.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

run_suite() {
  echo "== ctest in $1"
  # --no-tests=error: a suite that found nothing to run must not pass.
  (cd "$REPO_ROOT/$1" && ctest --output-on-failure --no-tests=error)
}

install_missing_packages
configure build -DTCA_BUILD_TESTS=ON
build build
run_suite build
configure build-asan -DTCA_BUILD_TESTS=ON -DTCA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
build build-asan
run_suite build-asan
echo "== all tests passed (build, build-asan)"
