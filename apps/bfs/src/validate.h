// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Validation of one search (validate_rules.h has the checks), distributed: each rank checks
// its share of the input tuples and its own vertices against the gathered tree (COMM.TREE).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common.h"
#include "parallel.h"
#include "partition.h"
#include "validate_rules.h"

namespace bfs {

struct Validation {
  unsigned failed = 0;          // CheckBit of every check that failed on some rank
  std::string detail;           // the first failure, in words (empty when none)
  uint64_t tuples_in_tree = 0;  // input tuples with both ends in the tree
  bool ok() const { return failed == 0; }
};

// "1 (tree), 4 (spans a component)"
std::string describe_checks(unsigned failed);

// What the checks found on this rank: failed bits, the first failing tuple (its position in the
// whole list) and vertex, and the tuples in the tree. The backends fill it; finish_validation
// combines the ranks.
struct LocalVerdict {
  unsigned tuple_failed = 0;
  uint64_t first_tuple = UINT64_MAX;
  Edge first_tuple_edge{};
  unsigned vertex_failed = 0;
  uint64_t first_vertex = UINT64_MAX;
  uint64_t tuples_in_tree = 0;
  uint64_t vertices = 0;  // of the graph
};

// A vertex's parent and level in the gathered tree, wherever it lives.
struct TreeEntry {
  int64_t parent = -1;
  int32_t level = -1;
};
using TreeLookup = std::function<TreeEntry(uint64_t vertex)>;

// Collective: combines the ranks' verdicts; the detail names the lowest failing rank's first
// failure, with the parents and levels around it.
Validation finish_validation(const LocalVerdict& mine, const TreeLookup& tree);

// Collective, CPU ranks. `parents` and `levels` are the gathered tree (partition.padded()
// entries each); `edges` this rank's tuples, which sit at positions [first_tuple, ...) of the
// list.
Validation validate_host(const Partition& partition, int rank, const std::vector<Edge>& edges,
                         uint64_t first_tuple, vertex_t root, const int64_t* parents,
                         const int32_t* levels, ThreadPool& pool);

}  // namespace bfs
