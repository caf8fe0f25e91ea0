// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "validate.h"

#include <algorithm>
#include <sstream>

#include "agree.h"
#include "bitmap.h"
#include "control.h"

namespace bfs {
namespace {

const char* check_name(int check) {
  static const char* const kNames[kChecks] = {"tree", "tree edge levels", "tuple levels",
                                              "spans a component", "parent is a neighbour"};
  return kNames[check];
}

std::string describe_vertex(uint64_t g, uint64_t vertices, const TreeLookup& tree) {
  std::ostringstream text;
  const TreeEntry entry = tree(g);
  text << "vertex " << g << " has parent " << entry.parent << " and level " << entry.level;
  const int64_t p = entry.parent;
  if (is_vertex(p, vertices) && static_cast<uint64_t>(p) != g)
    text << "; its parent's level is " << tree(static_cast<uint64_t>(p)).level;
  return text.str();
}

std::string describe_tuple(uint64_t index, const Edge& e, const TreeLookup& tree) {
  std::ostringstream text;
  const TreeEntry u = tree(static_cast<uint64_t>(e.u)), v = tree(static_cast<uint64_t>(e.v));
  text << "input tuple " << index << " (" << e.u << ", " << e.v << ") joins vertex " << e.u
       << " (parent " << u.parent << ", level " << u.level << ") and vertex " << e.v << " (parent "
       << v.parent << ", level " << v.level << ")";
  return text.str();
}

}  // namespace

std::string describe_checks(unsigned failed) {
  std::string text;
  for (int check = 0; check < kChecks; ++check) {
    if (!(failed & (1u << check))) continue;
    if (!text.empty()) text += ", ";
    text += std::to_string(check + 1) + " (" + check_name(check) + ")";
  }
  return text;
}

Validation finish_validation(const LocalVerdict& mine, const TreeLookup& tree) {
  Validation result;
  const unsigned local = mine.tuple_failed | mine.vertex_failed;
  result.failed = tca_apps::allreduce<uint32_t>(local, tca_apps::Op::kBitOr);
  result.tuples_in_tree = tca_apps::allreduce<uint64_t>(mine.tuples_in_tree, tca_apps::Op::kSum);
  if (result.failed == 0) return result;
  std::string detail;
  if (mine.vertex_failed != 0)
    detail = "checks " + describe_checks(mine.vertex_failed) + ": " +
             describe_vertex(mine.first_vertex, mine.vertices, tree);
  else if (mine.tuple_failed != 0)
    detail = "checks " + describe_checks(mine.tuple_failed) + ": " +
             describe_tuple(mine.first_tuple, mine.first_tuple_edge, tree);
  result.detail = first_message(detail);
  return result;
}

namespace {

// Check 1's walk on the host: tree levels along the parents, resolved pass by pass on this rank
// and round by round among the ranks (an allgather of every rank's block after each round).
std::vector<int32_t> host_tree_levels(const Partition& partition, int rank, vertex_t root,
                                      const int64_t* parents, ThreadPool& pool) {
  const uint64_t n = partition.vertices(), first_global = partition.first(rank);
  std::vector<int32_t> tree_levels(partition.padded(), -1);
  for (;;) {
    int changed_round = 0;
    for (bool changed = true; changed;) {
      std::vector<char> changed_by(pool.size(), 0);
      pool.parallel_for(
          partition.count(rank), 1 << 14, [&](uint64_t first, uint64_t last, int thread) {
            for (uint64_t i = first; i < last; ++i) {
              const uint64_t g = first_global + i;
              if (__atomic_load_n(&tree_levels[g], __ATOMIC_RELAXED) >= 0 || parents[g] == -1)
                continue;
              const int64_t p = parents[g];
              const int32_t above =
                  is_vertex(p, n) ? __atomic_load_n(&tree_levels[p], __ATOMIC_RELAXED) : -1;
              const int32_t t = tree_level_of(static_cast<int64_t>(g), root, p, above);
              if (t < 0) continue;
              __atomic_store_n(&tree_levels[g], t, __ATOMIC_RELAXED);
              changed_by[thread] = 1;
            }
          });
      changed = std::count(changed_by.begin(), changed_by.end(), 1) > 0;
      if (changed) changed_round = 1;
    }
    tca_apps::allgather_in_place(tree_levels.data(), partition.per_rank() * sizeof(int32_t));
    const int any = tca_apps::allreduce<int32_t>(changed_round, tca_apps::Op::kOr);
    if (!any) return tree_levels;
  }
}

// Checks 3 and 4 on this rank's tuples; marks in `found` the vertices whose tree edge is a tuple.
void check_tuples_host(const std::vector<Edge>& edges, uint64_t first_tuple, const int64_t* parents,
                       const int32_t* levels, std::vector<uint64_t>& found,
                       std::vector<LocalVerdict>& partial, ThreadPool& pool) {
  pool.parallel_for(edges.size(), 1 << 16, [&](uint64_t first, uint64_t last, int thread) {
    LocalVerdict& mine = partial[thread];
    for (uint64_t i = first; i < last; ++i) {
      const Edge& e = edges[i];
      const TupleVerdict verdict = check_tuple(e.u, e.v, parents, levels);
      if (verdict.in_tree) ++mine.tuples_in_tree;
      if (verdict.parent_of_u) __atomic_fetch_or(&found[e.u >> 6], bit_of(e.u), __ATOMIC_RELAXED);
      if (verdict.parent_of_v) __atomic_fetch_or(&found[e.v >> 6], bit_of(e.v), __ATOMIC_RELAXED);
      if (verdict.failed == 0) continue;
      mine.tuple_failed |= verdict.failed;
      if (first_tuple + i < mine.first_tuple) {
        mine.first_tuple = first_tuple + i;
        mine.first_tuple_edge = e;
      }
    }
  });
}

LocalVerdict merge(const std::vector<LocalVerdict>& partial) {
  LocalVerdict total;
  for (const LocalVerdict& p : partial) {
    total.tuple_failed |= p.tuple_failed;
    total.vertex_failed |= p.vertex_failed;
    total.tuples_in_tree += p.tuples_in_tree;
    total.first_vertex = std::min(total.first_vertex, p.first_vertex);
    if (p.first_tuple < total.first_tuple) {
      total.first_tuple = p.first_tuple;
      total.first_tuple_edge = p.first_tuple_edge;
    }
  }
  return total;
}

}  // namespace

Validation validate_host(const Partition& partition, int rank, const std::vector<Edge>& edges,
                         uint64_t first_tuple, vertex_t root, const int64_t* parents,
                         const int32_t* levels, ThreadPool& pool) {
  const uint64_t n = partition.vertices(), first_global = partition.first(rank);
  const std::vector<int32_t> tree_levels = host_tree_levels(partition, rank, root, parents, pool);

  std::vector<uint64_t> found(partition.padded() / 64, 0);
  std::vector<LocalVerdict> partial(pool.size());
  check_tuples_host(edges, first_tuple, parents, levels, found, partial, pool);
  tca_apps::allreduce_in_place(found.data(), found.size(), tca_apps::Op::kBitOr);

  // Own vertices: checks 1, 2 and 5.
  pool.parallel_for(partition.count(rank), 1 << 14, [&](uint64_t first, uint64_t last, int thread) {
    LocalVerdict& mine = partial[thread];
    for (uint64_t i = first; i < last; ++i) {
      const uint64_t g = first_global + i;
      const unsigned failed = check_vertex(static_cast<int64_t>(g), root, n, parents, levels,
                                           tree_levels.data(), test_bit(found.data(), g));
      if (failed == 0) continue;
      mine.vertex_failed |= failed;
      mine.first_vertex = std::min(mine.first_vertex, g);
    }
  });

  LocalVerdict total = merge(partial);
  total.vertices = n;
  return finish_validation(total, [&](uint64_t g) { return TreeEntry{parents[g], levels[g]}; });
}

}  // namespace bfs
