// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernel 1 on GPU ranks: the same graph as graph.h describes, built in GPU memory with CUB.
//
// The arcs of this rank (one rank: made on the GPU from the tuples; several: bucketed on the
// host and exchanged with MPI, as on CPU ranks) are radix-sorted as (row, neighbour) keys; the
// run of each row gives its tuple ends; the keys that differ from their predecessor and are no
// self-loop become the columns, and the row offsets come from where each row starts. With
// several ranks the (neighbour, row) keys sorted the same way give the top-down index.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common.h"
#include "cuda/cuda_util.h"
#include "partition.h"

namespace bfs {

struct DeviceGraph {
  Partition partition;
  int rank = 0;
  uint64_t local_vertices = 0;
  DeviceArray<uint64_t> row_offsets;  // local_vertices + 1
  DeviceArray<vertex_t> columns;      // global ids
  DeviceArray<uint32_t> tuple_ends;   // local_vertices
  DeviceArray<uint64_t> td_offsets;   // ranks > 1: padded + 1
  DeviceArray<vertex_t> td_columns;   // local ids
  uint64_t local_arcs = 0;
  uint64_t total_arcs = 0;

  bool has_td_index() const { return partition.ranks() > 1; }
  const uint64_t* td_offsets_or_rows() const {
    return has_td_index() ? td_offsets.data() : row_offsets.data();
  }
  const vertex_t* td_columns_or_columns() const {
    return has_td_index() ? td_columns.data() : columns.data();
  }
};

// The arcs of `count` tuples whose endpoints this rank owns all (one rank): 2 * count keys.
void make_arcs(const Edge* edges, uint64_t count, uint64_t* arcs, cudaStream_t stream);

// Builds `graph` (partition, rank, local_vertices set) from `count` arc keys in `arcs`
// (overwritten; `count` may be 0). Synchronizes the stream.
void build_device_graph(DeviceArray<uint64_t>& arcs, uint64_t count, DeviceGraph& graph,
                        cudaStream_t stream);

// degrees[i] = degree of local vertex local[i] (device arrays).
void device_degrees(const DeviceGraph& graph, const uint64_t* local, int64_t* degrees,
                    uint64_t count, cudaStream_t stream);

}  // namespace bfs
