// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernel 1 on the host: the distributed, undirected graph built from the input tuples.
//
// Every tuple (u, v) becomes the arcs u->v at u's owner and v->u at v's owner (self-loops give
// two arcs u->u). Each owner counts the arcs of its vertices before anything is dropped
// (tuple_ends: a tuple is counted once at each end, a self-loop twice at its vertex), then keeps
// one arc per neighbour and none to itself: duplicates and self-loops change no BFS tree, and
// the specification lets kernels ignore them, while tuple_ends keeps them for the TEPS count
// (nedge = the input tuples within the searched component = half the tuple_ends of its
// vertices).
//
// Columns hold global ids. With more than one rank, each rank also keeps the transpose of its
// block (td_offsets / td_columns: for every global u, the local neighbours of u), so that a
// top-down step expands the whole frontier, gathered on every rank as a bitmap, into the local
// vertices without sending edges. With one rank the graph itself is that index.
#pragma once

#include <cstdint>
#include <vector>

#include "common.h"
#include "parallel.h"
#include "partition.h"

namespace bfs {

struct HostGraph {
  Partition partition;
  int rank = 0;
  uint64_t local_vertices = 0;
  std::vector<uint64_t> row_offsets;  // local_vertices + 1
  std::vector<vertex_t> columns;      // global ids, ascending in each row
  std::vector<uint32_t> tuple_ends;   // local_vertices
  std::vector<uint64_t> td_offsets;   // ranks > 1: partition.padded() + 1
  std::vector<vertex_t> td_columns;   // local ids
  uint64_t total_arcs = 0;            // all ranks' columns

  uint64_t degree(uint64_t local) const { return row_offsets[local + 1] - row_offsets[local]; }
  bool has_td_index() const { return partition.ranks() > 1; }
};

// An arc as it travels to its owner: the local row in the high half, the neighbour's global id
// in the low half, so that sorting arcs sorts rows and, within a row, neighbours.
BFS_HD uint64_t arc_key(uint64_t local_row, uint64_t neighbour) {
  return (local_row << 32) | neighbour;
}

// Arcs of the local tuples grouped by destination rank: counts[r] arcs for rank r, in order.
std::vector<uint64_t> bucket_arcs(const Edge* edges, uint64_t count, const Partition& partition,
                                  ThreadPool& pool, std::vector<uint64_t>& counts);

// Collective: sends counts[r] arcs of `send` (grouped by rank) to every rank r; returns what
// this rank received. Large exchanges go in rounds (MPI counts are int).
std::vector<uint64_t> exchange_arcs(std::vector<uint64_t> send,
                                    const std::vector<uint64_t>& counts);

// The local part of the graph from the arcs this rank received.
void build_local_graph(std::vector<uint64_t>& arcs, HostGraph& graph, ThreadPool& pool);

// Collective: the whole of kernel 1 on the host.
HostGraph build_graph(const std::vector<Edge>& edges, const Partition& partition, ThreadPool& pool);

}  // namespace bfs
