// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The placement census: every placement of R ranks on a torus sub-cluster (rank 0 on node 0),
// the four algorithms simulated on each, counted against an enumeration made here another way.
#include "placements.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "fabric.h"
#include "params.h"

namespace tca_sim {
namespace {

// PEACH2 with its double ring replaced by one ring of `nodes`.
std::unique_ptr<Fabric> ring(int nodes) {
  std::ifstream in(std::string(TCA_SIM_FABRIC_DIR) + "/peach2.fabric");
  std::stringstream text;
  text << in.rdbuf();
  std::string description = text.str();
  description.replace(description.find("dims = 2x8"), 10,
                      "dims = " + std::to_string(nodes) + "    ");
  auto f = Fabric::from_params(ParamFile::parse(description, "ring.fabric"), TCA_SIM_FABRIC_DIR);
  f->build(nodes);
  return f;
}

double seconds(const Fabric& f, Algorithm a, const std::vector<int>& placement) {
  Job job = collective_job(false, a, 8, MemKind::kCpu, static_cast<int>(placement.size()), {});
  job.node_of_rank = placement;
  return simulate(f, job).phases.at("coll").max_seconds;
}

TEST(PlacementsTest, CountsMatchEveryPermutationSimulatedHere) {
  auto f = ring(6);
  const PlacementCensus census = placement_census(*f, false, 8, MemKind::kCpu, 4);
  EXPECT_EQ(census.placements, 5 * 4 * 3);
  std::map<Algorithm, long> fastest, tied;
  std::map<Algorithm, double> best;
  std::vector<int> nodes = {1, 2, 3, 4, 5};
  std::set<std::vector<int>> seen;
  do {  // every ordered choice of 3 of the 5 other nodes, by permutations of all 5
    const std::vector<int> placement = {0, nodes[0], nodes[1], nodes[2]};
    if (!seen.insert(placement).second) continue;
    std::map<Algorithm, double> t;
    double low = std::numeric_limits<double>::max();
    for (Algorithm a : all_algorithms()) low = std::min(low, t[a] = seconds(*f, a, placement));
    int within = 0;
    for (Algorithm a : all_algorithms()) within += t[a] <= low * 1.001 ? 1 : 0;
    for (Algorithm a : all_algorithms()) {
      tied[a] += t[a] <= low * 1.001 ? 1 : 0;
      fastest[a] += t[a] <= low * 1.001 && within == 1 ? 1 : 0;
      best[a] = best.count(a) ? std::min(best[a], t[a]) : t[a];
    }
  } while (std::next_permutation(nodes.begin(), nodes.end()));
  ASSERT_EQ(seen.size(), 60u);
  long tied_total = 0;
  for (Algorithm a : all_algorithms()) {
    const AlgorithmCensus& entry = census.algorithms.at(a);
    EXPECT_EQ(entry.fastest, fastest[a]) << algorithm_name(a);
    EXPECT_EQ(entry.fastest_or_tied, tied[a]) << algorithm_name(a);
    EXPECT_DOUBLE_EQ(entry.best_seconds, best[a]) << algorithm_name(a);
    EXPECT_DOUBLE_EQ(seconds(*f, a, entry.best_placement), entry.best_seconds) << algorithm_name(a);
    tied_total += entry.fastest_or_tied;
  }
  EXPECT_GE(tied_total, census.placements);  // every placement has a fastest algorithm
  // Three steps against two: the ring is never the fastest of four ranks.
  EXPECT_EQ(census.algorithms.at(Algorithm::kRing).fastest_or_tied, 0);
}

TEST(PlacementsTest, TwoRanksTieEverywhere) {
  auto f = Fabric::load(TCA_SIM_FABRIC_DIR, "peach2");
  f->build(16);
  const PlacementCensus census = placement_census(*f, false, 8, MemKind::kCpu, 2);
  EXPECT_EQ(census.placements, 15);
  for (const auto& [algorithm, entry] : census.algorithms) {
    EXPECT_EQ(entry.fastest, 0) << algorithm_name(algorithm);
    EXPECT_EQ(entry.fastest_or_tied, 15) << algorithm_name(algorithm);
    EXPECT_EQ(entry.best_placement.size(), 2u);
  }
}

TEST(PlacementsTest, RefusesWhatItCannotCount) {
  auto peach2 = Fabric::load(TCA_SIM_FABRIC_DIR, "peach2");
  peach2->build(16);
  auto expect_error = [](auto call, const std::string& words) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one saying '" << words << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error([&] { placement_census(*peach2, false, 8, MemKind::kCpu, 3); }, "power-of-two");
  expect_error([&] { placement_census(*peach2, false, 8, MemKind::kCpu, 8); },
               "placements; use fewer ranks");
  expect_error([&] { placement_census(*peach2, false, 8, MemKind::kCpu, 32); }, "do not fit");
  auto small = Fabric::load(TCA_SIM_FABRIC_DIR, "peach2");
  small->build(8);
  expect_error([&] { placement_census(*small, false, 8, MemKind::kCpu, 4); }, "must be built");
  auto ib = Fabric::load(TCA_SIM_FABRIC_DIR, "ib-qdr2");
  ib->build(4);
  expect_error([&] { placement_census(*ib, false, 8, MemKind::kCpu, 2); }, "not a torus");
}

}  // namespace
}  // namespace tca_sim
