// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "placements.h"

#include <algorithm>
#include <limits>

namespace tca_sim {
namespace {

constexpr double kTie = 1e-3;  // relative: times this close count as a tie

long placement_count(int nodes, int ranks) {
  long count = 1;
  for (int i = 1; i < ranks; ++i) {
    count *= nodes - i;
    if (count > kMaxPlacements) return count;
  }
  return count;
}

void check(const Fabric& fabric, int ranks) {
  if (fabric.family() != "tca" && fabric.family() != "apenet")
    throw Error("fabric " + fabric.name() +
                " is not a torus; placements are counted on tca and apenet fabrics");
  if (ranks < 2 || (ranks & (ranks - 1)) != 0)
    throw Error(
        "placements need a power-of-two rank count of at least 2 (every algorithm must run), not " +
        std::to_string(ranks));
  const int nodes = fabric.subcluster();
  if (fabric.nodes() < nodes)
    throw Error("fabric " + fabric.name() + " must be built with its " + std::to_string(nodes) +
                " sub-cluster nodes");
  if (ranks > nodes)
    throw Error(std::to_string(ranks) + " ranks do not fit the " + std::to_string(nodes) +
                " nodes of one " + fabric.name() + " sub-cluster");
  const long count = placement_count(nodes, ranks);
  if (count > kMaxPlacements)
    throw Error(std::to_string(ranks) + " ranks on " + std::to_string(nodes) +
                " nodes have more than " + std::to_string(kMaxPlacements) +
                " placements; use fewer ranks");
}

// Every placement with rank 0 on node 0 and the others on distinct nodes, in lexicographic order.
bool next_placement(std::vector<int>& placement, int nodes) {
  const int ranks = static_cast<int>(placement.size());
  for (int r = ranks - 1; r >= 1; --r) {
    for (int node = placement[r] + 1; node < nodes; ++node) {
      if (std::find(placement.begin() + 1, placement.begin() + r, node) != placement.begin() + r)
        continue;
      placement[r] = node;
      // Fill the later ranks with the smallest free nodes.
      for (int s = r + 1; s < ranks; ++s) {
        int free = 1;
        while (std::find(placement.begin(), placement.begin() + s, free) != placement.begin() + s)
          ++free;
        placement[s] = free;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

PlacementCensus placement_census(const Fabric& fabric, bool allgather, double bytes, MemKind kind,
                                 int ranks) {
  check(fabric, ranks);
  const int nodes = fabric.subcluster();
  PlacementCensus census;
  for (Algorithm a : all_algorithms())
    census.algorithms[a].best_seconds = std::numeric_limits<double>::max();
  std::vector<int> placement(ranks);
  for (int r = 0; r < ranks; ++r) placement[r] = r;
  do {
    std::map<Algorithm, double> time;
    double fastest = std::numeric_limits<double>::max();
    for (Algorithm a : all_algorithms()) {
      Job job = collective_job(allgather, a, bytes, kind, ranks, {});
      job.node_of_rank = placement;
      time[a] = simulate(fabric, job).phases.at("coll").max_seconds;
      fastest = std::min(fastest, time[a]);
    }
    int within = 0;  // algorithms tied for the fastest here
    for (Algorithm a : all_algorithms()) within += time[a] <= fastest * (1 + kTie) ? 1 : 0;
    for (Algorithm a : all_algorithms()) {
      AlgorithmCensus& entry = census.algorithms[a];
      const bool tied = time[a] <= fastest * (1 + kTie);
      entry.fastest_or_tied += tied ? 1 : 0;
      entry.fastest += tied && within == 1 ? 1 : 0;
      if (time[a] < entry.best_seconds) {
        entry.best_seconds = time[a];
        entry.best_placement = placement;
      }
    }
    ++census.placements;
  } while (next_placement(placement, nodes));
  return census;
}

}  // namespace tca_sim
