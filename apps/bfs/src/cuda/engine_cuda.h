// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU backend's engine: the BFS steps as CUDA kernels on the rank's GPU, every array in
// GPU memory, one stream.
//
// Bottom-up: a warp owns 32 consecutive local vertices (one word of the visited bitmap); its
// unvisited vertices are taken `lanes` lanes each (1, 2, 4, 8, 16 or 32 lanes per vertex),
// which read `lanes` consecutive neighbours at a time and stop at the first one in the
// frontier; the warp writes its word of the next frontier and of the visited set without
// atomics.
// Top-down: the gathered frontier bitmap becomes a table of chunks of at most 256 arcs of its
// vertices (warp-aggregated atomics give each warp of the first kernel its place); a warp
// expands one chunk at a time, coalesced, and a vertex joins by an atomic OR on the visited
// bitmap. Every size lives in GPU memory, so a level needs nothing from the host.
// A level (gather of the frontier, step, counts allreduce, copy of the counts to the host) is
// one CUDA graph where the exchange only enqueues work (tca, nccl): eight graphs (direction x
// frontier parity x whether the level gathers first), captured once, one launch per level.
// The level number lives in GPU memory too, counted by the graph itself.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/cuda_util.h"
#include "cuda/device_graph.h"
#include "cuda/timeline_cuda.h"
#include "engine.h"

namespace bfs {

struct EngineTuning {
  int lanes = 1;       // lanes per vertex in bottom-up steps: 1, 2, 4, 8, 16 or 32
  bool graphs = true;  // levels as CUDA graphs where the exchange allows
};

class CudaEngine final : public Engine {
 public:
  CudaEngine(const DeviceGraph& graph, Exchange& exchange, cudaStream_t stream,
             EngineTuning tuning);
  ~CudaEngine() override;
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  void begin_search(vertex_t root) override;
  void step(Direction direction, int level, int parity) override;
  Counts run_level(Exchange& exchange, Direction direction, int level, int parity) override;
  void synchronize() override;
  Timeline& timeline() override { return timeline_; }
  uint64_t visited_tuple_ends() override;

 private:
  struct LevelGraph {
    cudaGraphExec_t exec = nullptr;
    cudaEvent_t marks[4] = {};  // start, after the gather, after the step, after the counts
  };

  // Enqueues a step; `advance`: the level number moves on first (every level but the first).
  void enqueue_step(Direction direction, int parity, bool advance);
  void capture(LevelGraph& graph, Direction direction, int parity, bool gathers);
  void release_graphs();
  double elapsed(cudaEvent_t from, cudaEvent_t to) const;

  const DeviceGraph& graph_;
  Exchange& exchange_;
  StreamOrdered* ordered_ = nullptr;  // set when levels run as graphs
  cudaStream_t stream_;
  EngineTuning tuning_;
  uint64_t block_words_;  // 32-bit words of this rank's bitmap block
  int64_t* parents_;
  int32_t* levels_;
  DeviceArray<uint32_t> visited_;
  DeviceArray<uint64_t> chunks_;  // top-down: (vertex, chunk) of the frontier's arcs
  DeviceArray<unsigned long long> scalars_;  // chunk count, level, tuple-end sum
  PinnedArray<unsigned long long> sum_host_;
  CudaTimeline timeline_;
  LevelGraph graphs_[2][2][2];  // [direction][parity][gathers]
  cudaEvent_t previous_end_ = nullptr;
};

}  // namespace bfs
