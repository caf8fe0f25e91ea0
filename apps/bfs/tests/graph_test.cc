// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernel 1: the distributed CSR against a reference built from the whole tuple list.
#include "graph.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "test_graph.h"

namespace bfs {
namespace {

using test::world_rank;
using test::world_size;

// Every rank's part of the graph built from `edges` (each rank takes its even share) against the
// adjacency sets and tuple-end counts of the whole list.
void expect_graph_matches(const std::vector<Edge>& edges, uint64_t vertices) {
  const Partition partition(vertices, world_size());
  const Range share = even_share(edges.size(), world_rank(), world_size());
  ThreadPool pool(2);
  const HostGraph graph = build_graph(
      std::vector<Edge>(edges.begin() + share.first, edges.begin() + share.last), partition, pool);

  std::vector<std::set<vertex_t>> adjacency(vertices);
  std::vector<uint32_t> ends(vertices, 0);
  uint64_t arcs = 0;
  for (const Edge& e : edges) {
    ++ends[e.u];
    ++ends[e.v];
    if (e.u == e.v) continue;
    adjacency[e.u].insert(static_cast<vertex_t>(e.v));
    adjacency[e.v].insert(static_cast<vertex_t>(e.u));
  }
  for (const auto& row : adjacency) arcs += row.size();
  EXPECT_EQ(graph.total_arcs, arcs);

  const uint64_t first = partition.first(world_rank());
  ASSERT_EQ(graph.local_vertices, partition.count(world_rank()));
  for (uint64_t local = 0; local < graph.local_vertices; ++local) {
    const uint64_t g = first + local;
    const std::vector<vertex_t> row(graph.columns.begin() + graph.row_offsets[local],
                                    graph.columns.begin() + graph.row_offsets[local + 1]);
    const std::vector<vertex_t> expected(adjacency[g].begin(), adjacency[g].end());
    EXPECT_EQ(row, expected) << "row of vertex " << g;
    EXPECT_EQ(graph.tuple_ends[local], ends[g]) << "tuple ends of vertex " << g;
  }
  if (!graph.has_td_index()) return;
  // The top-down index: for every vertex u, the local vertices next to it.
  for (uint64_t u = 0; u < vertices; ++u) {
    std::set<vertex_t> listed(graph.td_columns.begin() + graph.td_offsets[u],
                              graph.td_columns.begin() + graph.td_offsets[u + 1]);
    std::set<vertex_t> expected;
    for (const vertex_t w : adjacency[u])
      if (partition.owner(w) == world_rank()) expected.insert(static_cast<vertex_t>(w - first));
    EXPECT_EQ(listed, expected) << "top-down list of vertex " << u;
  }
}

TEST(Graph, SelfLoopsAndDuplicatesDroppedButCounted) {
  expect_graph_matches({{0, 0}, {0, 1}, {1, 0}, {0, 1}, {2, 2}, {2, 2}, {3, 4}, {4, 3}, {1, 5}},
                       1100);
}

TEST(Graph, KroneckerGraphMatchesTheReference) {
  expect_graph_matches(test::kronecker_edges(10, 8, 4), 1024);
}

TEST(Graph, RanksWithoutVertices) {
  // 10 vertices: one rank owns them all, the others none.
  expect_graph_matches({{0, 9}, {9, 8}, {3, 3}, {2, 5}}, 10);
}

}  // namespace
}  // namespace bfs
