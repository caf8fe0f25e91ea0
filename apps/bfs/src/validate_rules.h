// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The specification's five checks of a BFS tree, per input tuple and per vertex (host and
// device code share them).
//
//   1 (tree)         the parents form a tree rooted at the search key: the root is its own
//                    parent, every other vertex in the tree has a parent that is a vertex, and
//                    following parents leads to the root (no cycle);
//   2 (tree levels)  every tree edge joins vertices whose BFS levels differ by exactly one (the
//                    root's level is 0, unreached vertices have none);
//   3 (edge levels)  every input tuple with both ends in the tree joins vertices whose levels
//                    differ by at most one;
//   4 (spans)        no input tuple has exactly one end in the tree: the tree spans whole
//                    connected components, and with 1 and 5 exactly the root's;
//   5 (parent edge)  every vertex but the root is joined to its parent by an input tuple.
//
// The levels are those the search returned; check 1 follows parents alone (tree_levels: each
// vertex's distance from the root along its parents, -1 where the walk never reaches it).
#pragma once

#include <cstdint>

#include "common.h"

namespace bfs {

enum CheckBit : unsigned {
  kCheckTree = 1u << 0,
  kCheckTreeLevels = 1u << 1,
  kCheckEdgeLevels = 1u << 2,
  kCheckSpans = 1u << 3,
  kCheckParentEdge = 1u << 4,
};
constexpr int kChecks = 5;

BFS_HD bool is_vertex(int64_t id, uint64_t vertices) {
  return id >= 0 && static_cast<uint64_t>(id) < vertices;
}

struct TupleVerdict {
  unsigned failed = 0;
  bool in_tree = false;      // both ends in the tree
  bool parent_of_u = false;  // the tuple is u's tree edge (u's parent is v)
  bool parent_of_v = false;
};

BFS_HD TupleVerdict check_tuple(int64_t u, int64_t v, const int64_t* parents,
                                const int32_t* levels) {
  TupleVerdict verdict;
  const int64_t pu = parents[u], pv = parents[v];
  const bool in_u = pu != -1, in_v = pv != -1;
  if (in_u != in_v) verdict.failed |= kCheckSpans;
  if (in_u && in_v) {
    verdict.in_tree = true;
    const int32_t lu = levels[u], lv = levels[v];
    // A tree vertex without a level fails check 2 at the vertex; here only real levels count.
    if (lu >= 0 && lv >= 0 && (lu - lv > 1 || lv - lu > 1)) verdict.failed |= kCheckEdgeLevels;
  }
  if (u != v) {
    verdict.parent_of_u = pu == v;
    verdict.parent_of_v = pv == u;
  }
  return verdict;
}

// Vertex g (global id) of a graph of `vertices` vertices; has_tree_edge: some input tuple joins
// g and its parent.
BFS_HD unsigned check_vertex(int64_t g, int64_t root, uint64_t vertices, const int64_t* parents,
                             const int32_t* levels, const int32_t* tree_levels,
                             bool has_tree_edge) {
  const int64_t p = parents[g];
  const int32_t level = levels[g];
  if (g == root) {
    unsigned failed = 0;
    if (p != root) failed |= kCheckTree;
    if (level != 0) failed |= kCheckTreeLevels;
    return failed;
  }
  if (p == -1) return level == -1 ? 0u : kCheckTreeLevels;
  if (!is_vertex(p, vertices)) return kCheckTree;
  unsigned failed = 0;
  if (tree_levels[g] < 0) failed |= kCheckTree;
  if (level < 1 || levels[p] != level - 1) failed |= kCheckTreeLevels;
  if (!has_tree_edge) failed |= kCheckParentEdge;
  return failed;
}

// Check 1's walk: g's tree level, given its parent p and, where p is a vertex, p's tree level
// `above` (-1 while unknown). -1 while it cannot be told.
BFS_HD int32_t tree_level_of(int64_t g, int64_t root, int64_t p, int32_t above) {
  if (g == root) return p == root ? 0 : -1;
  return above >= 0 ? above + 1 : -1;
}

}  // namespace bfs
