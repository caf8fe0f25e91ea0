// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernel 2 on graphs with a known answer, level by level, on every backend, comm and direction
// (at whatever number of ranks the program runs on).
#include <gtest/gtest.h>

#include <algorithm>

#include "test_graph.h"

namespace bfs {
namespace {

struct Expected {
  std::vector<int32_t> levels;  // -1: not reached
  int64_t nedge;                // input tuples within the component
};

const DirectionMode kModes[] = {DirectionMode::kAuto, DirectionMode::kTopDown,
                                DirectionMode::kBottomUp};
const CommKind kComms[] = {CommKind::kTca, CommKind::kMpi, CommKind::kNccl};

// Searches `edges` from `root` every way and checks levels, per-level frontiers, nedge and the
// validation.
void expect_search(const std::vector<Edge>& edges, uint64_t vertices, vertex_t root,
                   const Expected& expected) {
  for (const std::string& device : test::devices()) {
    test::TestGraph graph(edges, vertices, device);
    for (const CommKind comm : kComms)
      for (const DirectionMode mode : kModes) {
        SCOPED_TRACE(device + " --comm " + comm_name(comm) + " direction " +
                     std::to_string(static_cast<int>(mode)));
        if (!graph.search(root, comm, mode)) continue;  // not here (nccl on CPU ranks, ...)
        const std::vector<int32_t> levels = graph.levels();
        const std::vector<int64_t> parents = graph.parents();
        for (uint64_t v = 0; v < vertices; ++v) {
          ASSERT_EQ(levels[v], expected.levels[v]) << "level of vertex " << v;
          ASSERT_EQ(parents[v] == -1, expected.levels[v] == -1) << "parent of vertex " << v;
        }
        // The frontier each level starts from holds the vertices of that level.
        const std::vector<LevelRecord>& per_level = graph.result().per_level;
        const int32_t deepest = *std::max_element(expected.levels.begin(), expected.levels.end());
        ASSERT_EQ(graph.result().levels, deepest + 1);
        ASSERT_EQ(per_level.size(), static_cast<size_t>(deepest + 1));
        for (int32_t l = 0; l <= deepest; ++l)
          EXPECT_EQ(per_level[l].frontier,
                    std::count(expected.levels.begin(), expected.levels.end(), l))
              << "frontier of level " << l;
        EXPECT_EQ(graph.nedge(), expected.nedge);
        const Validation v = graph.validate(root);
        EXPECT_TRUE(v.ok()) << describe_checks(v.failed) << ": " << v.detail;
        EXPECT_EQ(v.tuples_in_tree, static_cast<uint64_t>(expected.nedge));
      }
  }
}

std::vector<int32_t> unreached(uint64_t vertices) { return std::vector<int32_t>(vertices, -1); }

TEST(KnownGraphs, Path) {
  const uint64_t n = 1100;  // longer than one rank's block (512): the path crosses ranks
  std::vector<Edge> edges;
  for (uint64_t i = 0; i + 1 < n; ++i)
    edges.push_back({static_cast<int64_t>(i), static_cast<int64_t>(i + 1)});
  Expected from_end{unreached(n), static_cast<int64_t>(n - 1)};
  for (uint64_t i = 0; i < n; ++i) from_end.levels[i] = static_cast<int32_t>(i);
  expect_search(edges, n, 0, from_end);
  Expected from_middle{unreached(n), static_cast<int64_t>(n - 1)};
  for (uint64_t i = 0; i < n; ++i)
    from_middle.levels[i] = static_cast<int32_t>(i > 600 ? i - 600 : 600 - i);
  expect_search(edges, n, 600, from_middle);
}

TEST(KnownGraphs, Star) {
  const uint64_t n = 2000, center = 1234;
  std::vector<Edge> edges;
  for (uint64_t i = 0; i < n; ++i)
    if (i != center) edges.push_back({static_cast<int64_t>(i), static_cast<int64_t>(center)});
  Expected from_center{std::vector<int32_t>(n, 1), static_cast<int64_t>(n - 1)};
  from_center.levels[center] = 0;
  expect_search(edges, n, center, from_center);
  Expected from_leaf{std::vector<int32_t>(n, 2), static_cast<int64_t>(n - 1)};
  from_leaf.levels[center] = 1;
  from_leaf.levels[7] = 0;
  expect_search(edges, n, 7, from_leaf);
}

TEST(KnownGraphs, TwoComponents) {
  // A cycle of 0..599 and a path of 600..1199: the search stays in its component.
  const uint64_t n = 1300;
  std::vector<Edge> edges;
  for (int64_t i = 0; i < 600; ++i) edges.push_back({i, (i + 1) % 600});
  for (int64_t i = 600; i + 1 < 1200; ++i) edges.push_back({i, i + 1});
  Expected in_cycle{unreached(n), 600};
  for (int64_t i = 0; i < 600; ++i) in_cycle.levels[i] = static_cast<int32_t>(std::min(i, 600 - i));
  expect_search(edges, n, 0, in_cycle);
  Expected in_path{unreached(n), 599};
  for (int64_t i = 600; i < 1200; ++i) in_path.levels[i] = static_cast<int32_t>(i - 600);
  expect_search(edges, n, 600, in_path);
}

TEST(KnownGraphs, SelfLoopsAndDuplicatesOnly) {
  // Vertex 1 and 2 joined by three tuples (two duplicates, one reversed), self-loops on 0, 2
  // and 3 (two on 3): the search from 1 reaches 2; nedge counts the three tuples and the
  // self-loop of 2, not those of 0 and 3.
  const uint64_t n = 700;
  const std::vector<Edge> edges{{0, 0}, {1, 2}, {1, 2}, {2, 1}, {2, 2}, {3, 3}, {3, 3}};
  Expected from_one{unreached(n), 4};
  from_one.levels[1] = 0;
  from_one.levels[2] = 1;
  expect_search(edges, n, 1, from_one);
}

TEST(KronceckerGraphs, EveryWayAgreesOnTheLevels) {
  // The levels of a BFS are unique: every backend, comm and direction must give the same.
  const std::vector<Edge> edges = test::kronecker_edges(11, 16, 5);
  test::TestGraph reference(edges, 2048, "cpu");
  ASSERT_TRUE(reference.search(edges[0].u == edges[0].v ? edges[1].u : edges[0].u,
                               test::reference_comm(), DirectionMode::kTopDown));
  const vertex_t root = reference.result().root;
  const std::vector<int32_t> levels = reference.levels();
  int64_t nedge = reference.nedge();
  std::vector<int32_t> expected(levels.begin(), levels.begin() + 2048);
  expect_search(edges, 2048, root, Expected{expected, nedge});
}

TEST(Direction, TheHeuristicOfHostAndGpu) {
  // next_direction is what the host loop and the GPU's pipelined levels both run.
  const Direction td = Direction::kTopDown, bu = Direction::kBottomUp;
  const DirectionMode automatic = DirectionMode::kAuto;
  // Forced modes ignore the counts.
  EXPECT_EQ(next_direction(bu, DirectionMode::kTopDown, 14, 24, 1 << 20, 1, 1 << 30, 1, 1 << 20),
            td);
  EXPECT_EQ(next_direction(td, DirectionMode::kBottomUp, 14, 24, 1, 0, 1, 1 << 30, 1 << 20), bu);
  // Top-down stays while m_f <= m_u / alpha, goes bottom-up past it.
  EXPECT_EQ(next_direction(td, automatic, 14, 24, 10, 1, 1400, 14 * 1400, 1 << 20), td);
  EXPECT_EQ(next_direction(td, automatic, 14, 24, 10, 1, 1401, 14 * 1400, 1 << 20), bu);
  // Bottom-up goes back only when the frontier is below N / beta and shrinking.
  EXPECT_EQ(next_direction(bu, automatic, 14, 24, 100, 200, 0, 0, 24 * 101), td);
  EXPECT_EQ(next_direction(bu, automatic, 14, 24, 100, 50, 0, 0, 24 * 101), bu);
  EXPECT_EQ(next_direction(bu, automatic, 14, 24, 101, 200, 0, 0, 24 * 101), bu);
  // choose_direction is the same function on the settings.
  SearchSettings settings;
  EXPECT_EQ(choose_direction(td, settings, 10, 1, 1401, 14 * 1400, 1 << 20), bu);
}

}  // namespace
}  // namespace bfs
