// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The report of a run: the Graph500 output ("key: value" lines as the reference prints them,
// one block per --comm), a table comparing the comms, and with --json one JSON object.
#pragma once

#include "options.h"
#include "run.h"

namespace bfs {

// Rank 0 prints; the other ranks call it too and print nothing.
void print_report(const RunSummary& summary, const Options& options, bool active);

}  // namespace bfs
