// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Rank-to-position mapping and the automatic choice: local functions, no tca job needed.
#include <tca/tca_coll.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>
#include <vector>

#include "test_util.h"

namespace tca_test {
namespace {

std::vector<int> positions(tcaCollAlgorithm algorithm, tcaCollTopology topology, int ranks) {
  std::vector<int> rank_at(ranks, -1);
  EXPECT_TCA_OK(tcaCollMapPositions(algorithm, &topology, ranks, rank_at.data()));
  return rank_at;
}

bool is_permutation(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  for (int i = 0; i < static_cast<int>(ranks.size()); ++i)
    if (ranks[i] != i) return false;
  return true;
}

int ring_hops(int a, int b, int length) {
  const int d = std::abs(a - b) % length;
  return std::min(d, length - d);
}

// Hops between ranks a and b of a width x height torus (rank = y * width + x).
int torus_hops(int a, int b, int width, int height) {
  return ring_hops(a % width, b % width, width) + ring_hops(a / width, b / width, height);
}

TEST(CollMapping, FlatAndUnreportedTopologiesAreTheIdentity) {
  std::vector<int> identity(6);
  std::iota(identity.begin(), identity.end(), 0);
  for (tcaCollAlgorithm algorithm : {TCA_COLL_RING, TCA_COLL_RECURSIVE_DOUBLING}) {
    EXPECT_EQ(positions(algorithm, {TCA_TOPOLOGY_FLAT, {0, 0}}, 6), identity);
    EXPECT_EQ(positions(algorithm, {TCA_TOPOLOGY_NONE, {0, 0}}, 6), identity);
  }
  std::vector<int> rank_at(6);
  EXPECT_TCA_OK(tcaCollMapPositions(TCA_COLL_RING, nullptr, 6, rank_at.data()));
  EXPECT_EQ(rank_at, identity);
}

TEST(CollMapping, EveryMappingIsAPermutation) {
  for (int ranks = 1; ranks <= 16; ++ranks)
    for (int algorithm = TCA_COLL_AUTO; algorithm < TCA_COLL_ALGORITHMS; ++algorithm) {
      const auto a = static_cast<tcaCollAlgorithm>(algorithm);
      EXPECT_TRUE(is_permutation(positions(a, {TCA_TOPOLOGY_RING, {0, 0}}, ranks)));
      for (int width = 1; width <= ranks; ++width) {
        if (ranks % width != 0) continue;
        EXPECT_TRUE(
            is_permutation(positions(a, {TCA_TOPOLOGY_TORUS_2D, {width, ranks / width}}, ranks)))
            << width << " x " << ranks / width;
      }
    }
}

// The seed slides' optimization: in every recursive-doubling step all pairs are equally far
// apart, and the last step (the most data) is between neighbours.
TEST(CollMapping, RecursiveDoublingStepsHaveEqualHopsAndEndBetweenNeighbours) {
  struct Torus {
    int width;
    int height;
  };
  for (const Torus torus : {Torus{8, 1}, Torus{16, 1}, Torus{8, 2}, Torus{4, 4}, Torus{2, 8}}) {
    const int ranks = torus.width * torus.height;
    const tcaCollTopology topology =
        torus.height == 1 ? tcaCollTopology{TCA_TOPOLOGY_RING, {0, 0}}
                          : tcaCollTopology{TCA_TOPOLOGY_TORUS_2D, {torus.width, torus.height}};
    const std::vector<int> rank_at = positions(TCA_COLL_RECURSIVE_DOUBLING, topology, ranks);
    int previous_hops = ranks;
    for (int bit = 1; bit < ranks; bit *= 2) {
      std::set<int> hops;
      for (int p = 0; p < ranks; ++p)
        hops.insert(torus_hops(rank_at[p], rank_at[p ^ bit], torus.width, torus.height));
      ASSERT_EQ(hops.size(), 1u) << torus.width << " x " << torus.height << ", step bit " << bit;
      EXPECT_LE(*hops.begin(), previous_hops) << "later steps must not be farther";
      previous_hops = *hops.begin();
    }
    EXPECT_EQ(previous_hops, 1) << torus.width << " x " << torus.height;
  }
}

TEST(CollMapping, RingsFollowTheWires) {
  struct Torus {
    int width;
    int height;
  };
  for (const Torus torus : {Torus{4, 2}, Torus{3, 4}, Torus{2, 3}, Torus{8, 2}}) {
    const int ranks = torus.width * torus.height;
    const std::vector<int> rank_at =
        positions(TCA_COLL_RING, {TCA_TOPOLOGY_TORUS_2D, {torus.width, torus.height}}, ranks);
    for (int p = 0; p < ranks; ++p)
      EXPECT_EQ(torus_hops(rank_at[p], rank_at[(p + 1) % ranks], torus.width, torus.height), 1)
          << torus.width << " x " << torus.height << ", positions " << p << " and " << p + 1;
  }
}

TEST(CollMapping, BadArgumentsAreRejected) {
  std::vector<int> rank_at(4);
  const tcaCollTopology torus{TCA_TOPOLOGY_TORUS_2D, {3, 1}};
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollMapPositions(TCA_COLL_RING, &torus, 4, rank_at.data()));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollMapPositions(TCA_COLL_RING, nullptr, 0, rank_at.data()));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollMapPositions(TCA_COLL_RING, nullptr, 4, nullptr));
}

TEST(CollAuto, ChoosesAConcreteAlgorithmForEverySize) {
  for (tcaCollKind kind : {TCA_COLL_ALLREDUCE, TCA_COLL_ALLGATHER})
    for (int ranks = 1; ranks <= 64; ranks *= 2)
      for (size_t bytes = 1; bytes <= (size_t{1} << 32); bytes *= 4) {
        tcaCollAlgorithm algorithm = TCA_COLL_AUTO;
        ASSERT_TCA_OK(tcaCollChooseAlgorithm(kind, TCA_MEM_CPU, bytes, ranks, &algorithm));
        EXPECT_NE(algorithm, TCA_COLL_AUTO);
        EXPECT_LT(algorithm, TCA_COLL_ALGORITHMS);
      }
}

}  // namespace
}  // namespace tca_test
