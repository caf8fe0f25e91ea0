// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// One invocation of tca-bfs: input, kernel 1, search keys, then for every --comm the searches
// (kernel 2), each validated, and the Graph500 statistics.
#pragma once

#include <string>
#include <vector>

#include "options.h"
#include "search.h"
#include "validate.h"

namespace bfs {

struct SearchRecord {
  SearchResult result;
  int64_t nedge = 0;  // input tuples within the searched component
  double teps = 0;
  bool validated = false;  // checked and correct
  double validate_seconds = 0;
};

struct CommRun {
  std::string comm;
  std::string skipped;  // why it did not run here ("" when it ran)
  std::vector<SearchRecord> searches;
};

struct RunSummary {
  // What the graph is.
  int scale = 0;
  int64_t edgefactor = 0;
  uint64_t vertices = 0;
  uint64_t tuples = 0;
  uint64_t arcs = 0;  // after duplicates and self-loops are dropped, both directions
  bool generated = true;
  uint64_t seed = 0;
  // Where and how it ran.
  int ranks = 1;
  std::string device;
  double generation_time = 0;
  double construction_time = 0;
  std::string keys;  // how the search keys were chosen
  bool validate = true;
  std::vector<CommRun> runs;
  std::vector<std::string> failures;  // wrong results (the exit status is then non-zero)
};

// Collective. Throws Error (agreed by every rank) on bad input; wrong results are listed in
// the summary's failures.
RunSummary run_benchmark(const Options& options);

}  // namespace bfs
