// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "cuda/device_graph.h"
#include "graph.h"

namespace bfs {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ uint64_t grid_thread() {
  return blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ uint64_t grid_threads() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

__global__ void make_arcs_kernel(const Edge* edges, uint64_t count, uint64_t* arcs) {
  for (uint64_t i = grid_thread(); i < count; i += grid_threads()) {
    const auto u = static_cast<uint64_t>(edges[i].u), v = static_cast<uint64_t>(edges[i].v);
    arcs[2 * i] = arc_key(u, v);
    arcs[2 * i + 1] = arc_key(v, u);
  }
}

// offsets[r] = the index of the first of the sorted keys whose row (high half) is >= r, for
// every r in [0, rows]: each position i writes the rows that start there.
__global__ void row_starts_kernel(const uint64_t* keys, uint64_t n, uint64_t rows,
                                  uint64_t* offsets) {
  for (uint64_t i = grid_thread(); i <= n; i += grid_threads()) {
    const uint64_t from = i == 0 ? 0 : (keys[i - 1] >> 32) + 1;
    const uint64_t to = i < n ? keys[i] >> 32 : rows;
    for (uint64_t r = from; r <= to; ++r) offsets[r] = i;
  }
}

__global__ void lengths_kernel(const uint64_t* offsets, uint64_t rows, uint32_t* lengths) {
  for (uint64_t r = grid_thread(); r < rows; r += grid_threads())
    lengths[r] = static_cast<uint32_t>(offsets[r + 1] - offsets[r]);
}

// Keep the first of equal keys, and no arc from a vertex to itself.
__global__ void keep_kernel(const uint64_t* keys, uint64_t n, uint64_t first_global,
                            unsigned char* keep) {
  for (uint64_t i = grid_thread(); i < n; i += grid_threads()) {
    const uint64_t key = keys[i];
    const bool repeated = i > 0 && keys[i - 1] == key;
    const bool self = (key & 0xFFFFFFFFu) == first_global + (key >> 32);
    keep[i] = !repeated && !self;
  }
}

__global__ void low_half_kernel(const uint64_t* keys, uint64_t n, vertex_t* out) {
  for (uint64_t i = grid_thread(); i < n; i += grid_threads())
    out[i] = static_cast<vertex_t>(keys[i]);
}

__global__ void transpose_kernel(const uint64_t* keys, uint64_t n, uint64_t* out) {
  for (uint64_t i = grid_thread(); i < n; i += grid_threads())
    out[i] = (keys[i] << 32) | (keys[i] >> 32);
}

__global__ void degrees_kernel(const uint64_t* row_offsets, const uint64_t* local, int64_t* degrees,
                               uint64_t count) {
  for (uint64_t i = grid_thread(); i < count; i += grid_threads())
    degrees[i] = static_cast<int64_t>(row_offsets[local[i] + 1] - row_offsets[local[i]]);
}

int bits_for(uint64_t value) {
  int bits = 1;
  while (bits < 64 && (uint64_t{1} << bits) <= value) ++bits;
  return bits;
}

// Sorts `count` keys whose high half is below `rows`; returns the buffer that holds them.
uint64_t* sort_keys(uint64_t* keys, uint64_t* other, uint64_t count, uint64_t rows,
                    cudaStream_t stream) {
  cub::DoubleBuffer<uint64_t> buffers(keys, other);
  const int end_bit = 32 + bits_for(rows);
  size_t temp_bytes = 0;
  check_cuda(
      cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, buffers, count, 0, end_bit, stream),
      "cub::DeviceRadixSort::SortKeys");
  DeviceArray<unsigned char> temp(temp_bytes);
  check_cuda(
      cub::DeviceRadixSort::SortKeys(temp.data(), temp_bytes, buffers, count, 0, end_bit, stream),
      "cub::DeviceRadixSort::SortKeys");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return buffers.Current();
}

// offsets (rows + 1) of sorted keys.
void row_offsets_of(const uint64_t* keys, uint64_t n, uint64_t rows, DeviceArray<uint64_t>& offsets,
                    cudaStream_t stream) {
  offsets.resize(rows + 1);
  row_starts_kernel<<<grid_for(n + 1, kThreads), kThreads, 0, stream>>>(keys, n, rows,
                                                                        offsets.data());
  check_cuda(cudaGetLastError(), "row_starts_kernel");
}

}  // namespace

void make_arcs(const Edge* edges, uint64_t count, uint64_t* arcs, cudaStream_t stream) {
  if (count == 0) return;
  make_arcs_kernel<<<grid_for(count, kThreads), kThreads, 0, stream>>>(edges, count, arcs);
  check_cuda(cudaGetLastError(), "make_arcs_kernel");
}

void build_device_graph(DeviceArray<uint64_t>& arcs, uint64_t count, DeviceGraph& graph,
                        cudaStream_t stream) {
  const uint64_t rows = graph.local_vertices;
  DeviceArray<uint64_t> other(count);
  const uint64_t* sorted =
      count == 0 ? arcs.data() : sort_keys(arcs.data(), other.data(), count, rows, stream);
  uint64_t* spare = sorted == arcs.data() ? other.data() : arcs.data();

  // Tuple ends: the run of each row before anything is dropped.
  DeviceArray<uint64_t> raw_offsets;
  row_offsets_of(sorted, count, rows, raw_offsets, stream);
  graph.tuple_ends.resize(rows);
  if (rows > 0)
    lengths_kernel<<<grid_for(rows, kThreads), kThreads, 0, stream>>>(raw_offsets.data(), rows,
                                                                      graph.tuple_ends.data());
  raw_offsets.release();

  // One arc per neighbour, none to itself.
  DeviceArray<unsigned char> keep(count);
  DeviceArray<uint64_t> kept_count(1);
  check_cuda(cudaMemsetAsync(kept_count.data(), 0, sizeof(uint64_t), stream), "cudaMemsetAsync");
  if (count > 0) {
    keep_kernel<<<grid_for(count, kThreads), kThreads, 0, stream>>>(
        sorted, count, graph.partition.first(graph.rank), keep.data());
    size_t temp_bytes = 0;
    check_cuda(cub::DeviceSelect::Flagged(nullptr, temp_bytes, sorted, keep.data(), spare,
                                          kept_count.data(), count, stream),
               "cub::DeviceSelect::Flagged");
    DeviceArray<unsigned char> temp(temp_bytes);
    check_cuda(cub::DeviceSelect::Flagged(temp.data(), temp_bytes, sorted, keep.data(), spare,
                                          kept_count.data(), count, stream),
               "cub::DeviceSelect::Flagged");
  }
  check_cuda(cudaMemcpyAsync(&graph.local_arcs, kept_count.data(), sizeof(uint64_t),
                             cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  keep.release();
  const uint64_t kept = graph.local_arcs;
  graph.columns.resize(kept);
  if (kept > 0)
    low_half_kernel<<<grid_for(kept, kThreads), kThreads, 0, stream>>>(spare, kept,
                                                                       graph.columns.data());
  row_offsets_of(spare, kept, rows, graph.row_offsets, stream);

  if (graph.has_td_index()) {
    // The transpose: (neighbour, row) keys sorted the same way.
    uint64_t* transposed = const_cast<uint64_t*>(sorted);
    if (kept > 0)
      transpose_kernel<<<grid_for(kept, kThreads), kThreads, 0, stream>>>(spare, kept, transposed);
    const uint64_t padded = graph.partition.padded();
    const uint64_t* by_neighbour =
        kept == 0 ? transposed : sort_keys(transposed, spare, kept, padded, stream);
    row_offsets_of(by_neighbour, kept, padded, graph.td_offsets, stream);
    graph.td_columns.resize(kept);
    if (kept > 0)
      low_half_kernel<<<grid_for(kept, kThreads), kThreads, 0, stream>>>(by_neighbour, kept,
                                                                         graph.td_columns.data());
  }
  check_cuda(cudaGetLastError(), "build_device_graph");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  arcs.release();
}

void device_degrees(const DeviceGraph& graph, const uint64_t* local, int64_t* degrees,
                    uint64_t count, cudaStream_t stream) {
  if (count == 0) return;
  degrees_kernel<<<grid_for(count, kThreads), kThreads, 0, stream>>>(graph.row_offsets.data(),
                                                                     local, degrees, count);
  check_cuda(cudaGetLastError(), "degrees_kernel");
}

}  // namespace bfs
