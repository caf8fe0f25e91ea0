// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include <vector>

#include "agree.h"
#include "control.h"
#include "cuda/validate_cuda.h"
#include "validate_rules.h"

namespace bfs {
namespace {

constexpr int kThreads = 256;

// The verdict's words in device memory.
enum VerdictWord {
  kTupleFailed = 0,
  kVertexFailed,
  kFirstTuple,
  kFirstVertex,
  kInTree,
  kChanged,
  kVerdictWords
};

__device__ __forceinline__ uint64_t thread_index() {
  return blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ uint64_t thread_count() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

__global__ void tree_level_kernel(const int64_t* parents, int32_t* tree_levels, uint64_t first,
                                  uint64_t count, uint64_t vertices, int64_t root,
                                  unsigned long long* verdict) {
  bool changed = false;
  for (uint64_t i = thread_index(); i < count; i += thread_count()) {
    const uint64_t g = first + i;
    volatile int32_t* levels = tree_levels;
    if (levels[g] >= 0 || parents[g] == -1) continue;
    const int64_t p = parents[g];
    const int32_t above = is_vertex(p, vertices) ? levels[p] : -1;
    const int32_t t = tree_level_of(static_cast<int64_t>(g), root, p, above);
    if (t < 0) continue;
    levels[g] = t;
    changed = true;
  }
  if (__syncthreads_or(changed) && threadIdx.x == 0) verdict[kChanged] = 1;
}

__global__ void tuple_kernel(const Edge* edges, uint64_t count, const int64_t* parents,
                             const int32_t* levels, unsigned long long* found,
                             unsigned long long* verdict) {
  unsigned long long in_tree = 0;
  for (uint64_t i = thread_index(); i < count; i += thread_count()) {
    const Edge e = edges[i];
    const TupleVerdict v = check_tuple(e.u, e.v, parents, levels);
    in_tree += v.in_tree ? 1 : 0;
    if (v.parent_of_u) atomicOr(found + (e.u >> 6), 1ull << (e.u & 63));
    if (v.parent_of_v) atomicOr(found + (e.v >> 6), 1ull << (e.v & 63));
    if (v.failed != 0) {
      atomicOr(verdict + kTupleFailed, static_cast<unsigned long long>(v.failed));
      atomicMin(verdict + kFirstTuple, static_cast<unsigned long long>(i));
    }
  }
  for (int offset = 16; offset > 0; offset /= 2)
    in_tree += __shfl_down_sync(0xFFFFFFFFu, in_tree, offset);
  if ((threadIdx.x & 31) == 0 && in_tree != 0) atomicAdd(verdict + kInTree, in_tree);
}

__global__ void vertex_kernel(uint64_t first, uint64_t count, uint64_t vertices, int64_t root,
                              const int64_t* parents, const int32_t* levels,
                              const int32_t* tree_levels, const unsigned long long* found,
                              unsigned long long* verdict) {
  for (uint64_t i = thread_index(); i < count; i += thread_count()) {
    const uint64_t g = first + i;
    const bool edge = (found[g >> 6] >> (g & 63)) & 1ull;
    const unsigned failed =
        check_vertex(static_cast<int64_t>(g), root, vertices, parents, levels, tree_levels, edge);
    if (failed == 0) continue;
    atomicOr(verdict + kVertexFailed, static_cast<unsigned long long>(failed));
    atomicMin(verdict + kFirstVertex, static_cast<unsigned long long>(g));
  }
}

}  // namespace

DeviceValidator::DeviceValidator(const Partition& partition, int rank, cudaStream_t stream)
    : partition_(partition),
      rank_(rank),
      stream_(stream),
      tree_levels_(partition.padded()),
      found_(partition.padded() / 64),
      verdict_(kVerdictWords),
      verdict_host_(kVerdictWords) {}

void DeviceValidator::tree_levels(vertex_t root, const int64_t* parents) {
  const uint64_t first = partition_.first(rank_), count = partition_.count(rank_);
  const uint64_t per = partition_.per_rank();
  check_cuda(cudaMemsetAsync(tree_levels_.data(), 0xFF, tree_levels_.bytes(), stream_),
             "cudaMemsetAsync");
  std::vector<int32_t> staged(partition_.ranks() > 1 ? partition_.padded() : 0);
  for (;;) {
    int changed_round = 0;
    for (;;) {  // local passes until nothing changes here
      check_cuda(
          cudaMemsetAsync(verdict_.data() + kChanged, 0, sizeof(unsigned long long), stream_),
          "cudaMemsetAsync");
      if (count > 0)
        tree_level_kernel<<<grid_for(count, kThreads), kThreads, 0, stream_>>>(
            parents, tree_levels_.data(), first, count, partition_.vertices(), root,
            verdict_.data());
      check_cuda(cudaMemcpyAsync(verdict_host_.data() + kChanged, verdict_.data() + kChanged,
                                 sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync");
      check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      if (verdict_host_.data()[kChanged] == 0) break;
      changed_round = 1;
    }
    if (partition_.ranks() == 1) return;
    copy_sync(staged.data() + rank_ * per, tree_levels_.data() + rank_ * per, per * sizeof(int32_t),
              cudaMemcpyDeviceToHost, stream_);
    tca_apps::allgather_in_place(staged.data(), per * sizeof(int32_t));
    copy_sync(tree_levels_.data(), staged.data(), staged.size() * sizeof(int32_t),
              cudaMemcpyHostToDevice, stream_);
    const int any = tca_apps::allreduce<int32_t>(changed_round, tca_apps::Op::kOr);
    if (!any) return;
  }
}

Validation DeviceValidator::validate(const Edge* edges, uint64_t count, uint64_t first_tuple,
                                     vertex_t root, const int64_t* parents, const int32_t* levels) {
  tree_levels(root, parents);
  unsigned long long* verdict = verdict_.data();
  const unsigned long long initial[kVerdictWords] = {0, 0, ~0ull, ~0ull, 0, 0};
  check_cuda(cudaMemcpyAsync(verdict, initial, sizeof(initial), cudaMemcpyHostToDevice, stream_),
             "cudaMemcpyAsync");
  check_cuda(cudaMemsetAsync(found_.data(), 0, found_.bytes(), stream_), "cudaMemsetAsync");
  if (count > 0)
    tuple_kernel<<<grid_for(count, kThreads), kThreads, 0, stream_>>>(edges, count, parents, levels,
                                                                      found_.data(), verdict);
  check_cuda(cudaGetLastError(), "tuple_kernel");
  if (partition_.ranks() > 1) {
    std::vector<unsigned long long> found(found_.size());
    check_cuda(cudaMemcpyAsync(found.data(), found_.data(), found_.bytes(), cudaMemcpyDeviceToHost,
                               stream_),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    tca_apps::allreduce_in_place(found.data(), found.size(), tca_apps::Op::kBitOr);
    check_cuda(cudaMemcpyAsync(found_.data(), found.data(), found_.bytes(), cudaMemcpyHostToDevice,
                               stream_),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  const uint64_t first = partition_.first(rank_), local = partition_.count(rank_);
  if (local > 0)
    vertex_kernel<<<grid_for(local, kThreads), kThreads, 0, stream_>>>(
        first, local, partition_.vertices(), root, parents, levels, tree_levels_.data(),
        found_.data(), verdict);
  check_cuda(cudaGetLastError(), "vertex_kernel");
  check_cuda(
      cudaMemcpyAsync(verdict_host_.data(), verdict, kVerdictWords * sizeof(unsigned long long),
                      cudaMemcpyDeviceToHost, stream_),
      "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");

  const unsigned long long* v = verdict_host_.data();
  LocalVerdict mine;
  mine.vertices = partition_.vertices();
  mine.tuple_failed = static_cast<unsigned>(v[kTupleFailed]);
  mine.vertex_failed = static_cast<unsigned>(v[kVertexFailed]);
  mine.tuples_in_tree = v[kInTree];
  mine.first_vertex = v[kFirstVertex];
  if (mine.tuple_failed != 0) {
    mine.first_tuple = first_tuple + v[kFirstTuple];
    copy_sync(&mine.first_tuple_edge, edges + v[kFirstTuple], sizeof(Edge), cudaMemcpyDeviceToHost,
              stream_);
  }
  return finish_validation(mine, [&](uint64_t g) {
    TreeEntry entry;
    copy_sync(&entry.parent, parents + g, sizeof(int64_t), cudaMemcpyDeviceToHost, stream_);
    copy_sync(&entry.level, levels + g, sizeof(int32_t), cudaMemcpyDeviceToHost, stream_);
    return entry;
  });
}

}  // namespace bfs
