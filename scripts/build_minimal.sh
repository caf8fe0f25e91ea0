#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Builds the smallest configuration — the library alone, with no tests, benchmarks,
# applications or examples (tca-topo too where CUDA is built) — into build-minimal/, finding or
# installing what it needs as scripts/test.sh does. CI runs it after the tests: every option
# combination that leaves parts out must still build.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_prerequisites build
configure build-minimal -DTCA_BUILD_TESTS=OFF -DTCA_BUILD_BENCH=OFF -DTCA_BUILD_APPS=OFF \
  -DTCA_BUILD_EXAMPLES=OFF
build build-minimal
say "the minimal configuration built (build-minimal)"
