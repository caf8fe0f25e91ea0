// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Which collective algorithm is fastest, placement by placement: every way of putting R ranks on
// the nodes of one torus sub-cluster (rank 0 on node 0: the torus and its routing look the same
// from every node, so every other placement is a shift of one of these), each of the four
// algorithms simulated on it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fabric.h"
#include "patterns.h"

namespace tca_sim {

struct AlgorithmCensus {
  long fastest = 0;                 // placements where it is strictly the fastest
  long fastest_or_tied = 0;         // ... or tied with the fastest (within 0.1%)
  double best_seconds = 0;          // its best time over all placements
  std::vector<int> best_placement;  // node of each rank there
};

struct PlacementCensus {
  long placements = 0;
  std::map<Algorithm, AlgorithmCensus> algorithms;
};

// At most this many placements are simulated (four simulations each).
constexpr long kMaxPlacements = 20000;

// Throws Error for a fabric that is not a torus, a rank count the algorithms cannot all run
// (they need a power of two), more ranks than the sub-cluster's nodes, or more placements than
// kMaxPlacements.
PlacementCensus placement_census(const Fabric& fabric, bool allgather, double bytes, MemKind kind,
                                 int ranks);

}  // namespace tca_sim
