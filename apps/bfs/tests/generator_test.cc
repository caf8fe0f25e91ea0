// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The Kronecker generator, the keyed permutations and the search keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "edge_list.h"
#include "kronecker.h"
#include "parallel.h"
#include "rng.h"
#include "roots.h"
#include "test_graph.h"

namespace bfs {
namespace {

TEST(Feistel, IsABijectionOfEverySize) {
  for (const uint64_t n : {1ull, 2ull, 3ull, 17ull, 64ull, 1000ull, 4096ull, 65537ull}) {
    const FeistelPermutation permutation(n, 12345);
    std::vector<char> seen(n, 0);
    for (uint64_t x = 0; x < n; ++x) {
      const uint64_t y = permutation(x);
      ASSERT_LT(y, n);
      ASSERT_FALSE(seen[y]) << "n=" << n << " maps two values to " << y;
      seen[y] = 1;
    }
  }
}

TEST(Feistel, ScramblesAndDependsOnTheKey) {
  const FeistelPermutation a(1 << 16, 1), b(1 << 16, 2);
  int fixed = 0, same = 0;
  for (uint64_t x = 0; x < (1 << 16); ++x) {
    fixed += a(x) == x;
    same += a(x) == b(x);
  }
  EXPECT_LT(fixed, 64);
  EXPECT_LT(same, 64);
}

TEST(Philox, KnownAnswer) {
  // The Random123 known-answer vector of Philox-4x32-10 for counter 0 and key 0.
  const Philox4 r = philox4x32(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(r.word[0], 0x6627e8d5u);
  EXPECT_EQ(r.word[1], 0xe169c58du);
  EXPECT_EQ(r.word[2], 0xbc57ac4cu);
  EXPECT_EQ(r.word[3], 0x9b00dbd8u);
}

TEST(Kronecker, SizesAndRange) {
  const KroneckerGenerator generator(10, 16, 7);
  EXPECT_EQ(generator.vertices(), 1024u);
  EXPECT_EQ(generator.edges(), 16384u);
  for (uint64_t i = 0; i < generator.edges(); ++i) {
    const Edge e = generator.edge(i);
    ASSERT_GE(e.u, 0);
    ASSERT_LT(e.u, 1024);
    ASSERT_GE(e.v, 0);
    ASSERT_LT(e.v, 1024);
  }
}

TEST(Kronecker, TheSameListWhateverTheShares) {
  const KroneckerGenerator generator(9, 8, 3);
  ThreadPool pool(3);
  const std::vector<Edge> whole = generate_edges(generator, Range{0, generator.edges()}, pool);
  for (int ranks = 1; ranks <= 5; ++ranks) {
    std::vector<Edge> joined;
    for (int r = 0; r < ranks; ++r) {
      const std::vector<Edge> part =
          generate_edges(generator, even_share(generator.edges(), r, ranks), pool);
      joined.insert(joined.end(), part.begin(), part.end());
    }
    ASSERT_EQ(joined.size(), whole.size());
    for (size_t i = 0; i < whole.size(); ++i) {
      ASSERT_EQ(joined[i].u, whole[i].u) << ranks << " shares, tuple " << i;
      ASSERT_EQ(joined[i].v, whole[i].v) << ranks << " shares, tuple " << i;
    }
  }
}

TEST(Kronecker, SeedsGiveDifferentLists) {
  const KroneckerGenerator a(10, 16, 1), b(10, 16, 2);
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i)
    same += a.edge(i).u == b.edge(i).u && a.edge(i).v == b.edge(i).v;
  EXPECT_LT(same, 10);
}

// Without the label permutation the top bit of the endpoints picks the quadrant with the
// initiator's probabilities; with it, the degree sequence keeps the skew: the share of the
// tuples that touch the busiest 1% of the vertices is far above 1%.
TEST(Kronecker, DegreesAreSkewedAsRMat) {
  const int scale = 14;
  const KroneckerGenerator generator(scale, 16, 11);
  std::vector<uint64_t> degree(generator.vertices(), 0);
  for (uint64_t i = 0; i < generator.edges(); ++i) {
    const Edge e = generator.edge(i);
    ++degree[e.u];
    ++degree[e.v];
  }
  std::sort(degree.rbegin(), degree.rend());
  uint64_t top = 0, all = 0;
  for (size_t i = 0; i < degree.size(); ++i) {
    all += degree[i];
    if (i < degree.size() / 100) top += degree[i];
  }
  EXPECT_GT(static_cast<double>(top) / all, 0.15);
  const uint64_t isolated = static_cast<uint64_t>(std::count(degree.begin(), degree.end(), 0u));
  EXPECT_GT(isolated, generator.vertices() / 20);  // R-MAT leaves many vertices without edges
}

// The initiator: with A = 1 every edge is (0, 0) before the labels are permuted, so all tuples
// join the same two... the same vertex: a self-loop on one vertex.
TEST(Kronecker, InitiatorDecidesTheQuadrants) {
  Initiator corner;
  corner.a = 1.0;
  corner.b = 0.0;
  corner.c = 0.0;
  const KroneckerGenerator generator(8, 4, 5, corner);
  const Edge first = generator.edge(0);
  EXPECT_EQ(first.u, first.v);
  for (uint64_t i = 0; i < generator.edges(); ++i) {
    ASSERT_EQ(generator.edge(i).u, first.u);
    ASSERT_EQ(generator.edge(i).v, first.v);
  }
}

TEST(SearchKeys, SampledKeysHaveDegreeAndNoRepeats) {
  const std::vector<Edge> edges = test::kronecker_edges(8, 4, 21);
  test::TestGraph graph(edges, 256, "cpu");
  const std::vector<SearchKey> keys =
      sample_keys(graph.partition(), test::world_rank(), 21, 64, graph.backend().degrees());
  ASSERT_EQ(keys.size(), 64u);
  std::set<vertex_t> distinct;
  for (const SearchKey& k : keys) {
    EXPECT_GT(k.degree, 0);
    distinct.insert(k.vertex);
  }
  EXPECT_EQ(distinct.size(), keys.size());
  // The same keys again (deterministic), and fewer when the graph has fewer candidates.
  const std::vector<SearchKey> again =
      sample_keys(graph.partition(), test::world_rank(), 21, 64, graph.backend().degrees());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(keys[i].vertex, again[i].vertex);
}

TEST(SearchKeys, FewerThan64WhenFewVerticesHaveNeighbours) {
  // 8 vertices joined to another, the rest isolated or with self-loops only.
  std::vector<Edge> edges{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {9, 9}, {10, 10}};
  test::TestGraph graph(edges, 300, "cpu");
  const std::vector<SearchKey> keys =
      sample_keys(graph.partition(), test::world_rank(), 1, 64, graph.backend().degrees());
  ASSERT_EQ(keys.size(), 8u);
  for (const SearchKey& k : keys) EXPECT_LT(k.vertex, 8u);
}

TEST(SearchKeys, GivenKeyOfDegreeZeroIsRefused) {
  std::vector<Edge> edges{{0, 1}, {2, 2}};
  test::TestGraph graph(edges, 1024, "cpu");
  try {
    given_keys(graph.partition(), test::world_rank(), {2}, "", graph.backend().degrees());
    FAIL() << "a key with only a self-loop was accepted";
  } catch (const AgreedError& e) {
    EXPECT_NE(std::string(e.what()).find("search key 2 has degree 0"), std::string::npos)
        << e.what();
  }
  try {
    given_keys(graph.partition(), test::world_rank(), {5000}, "", graph.backend().degrees());
    FAIL() << "a key beyond the vertices was accepted";
  } catch (const AgreedError& e) {
    EXPECT_NE(std::string(e.what()).find("search key 5000 is not a vertex"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace bfs
