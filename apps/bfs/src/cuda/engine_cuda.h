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
// A level (gather of the frontier, step, counts allreduce) is one CUDA graph where the exchange
// only enqueues work (tca, nccl). The level number lives in GPU memory too, counted by the graph
// itself.
//
// Pipelined levels (the default, TCA_BFS_AHEAD=1 or 2): the direction heuristic runs on the GPU,
// in a one-thread kernel after the counts' allreduce that also moves the level number on and
// says when the search is done; each level's graph launches both directions' kernels, and the
// ones of the other direction (or of a level after the last) return at once. The graphs no
// longer depend on the host's decision, so the host launches levels ahead of the GPU and only
// reads, from pinned memory, what each level found: no host round trip between two levels.
// A level after the last one finds the search done and skips its gather (tca: the gather runs
// as a kernel of ours that can skip it) and its step. Five graphs: the first level, then four
// copies in turn (so that a level's slot is read before its copy is launched again).
// A pipelined level's phases are timed by its kernels: they read the GPU's clock (%globaltimer)
// at the start of the gather (tca's kernel of ours), of the step and of finish_kernel's end,
// and at each step block's end, and finish_kernel writes the readings into the level's slot;
// the host waits for a level by reading the slot's sequence number. Where the gather is not a
// kernel of ours (nccl), CUDA events recorded in the graph time the phases, as call-by-call
// levels do.
//
// Pushed frontiers (tca, pipelined levels, more than one rank, TCA_BFS_PUSH=1): no gather. The
// level reads the bitmap the GPU keeps as current (of three, exchange.h's PushedFrontiers), its
// step writes this rank's block of the next one, and publish_kernel stores that block's
// non-empty 16-byte pieces into every peer's copy and clears this rank's copy of the third
// bitmap, before the counts' allreduce publishes the stores. The level's COMM.OUT is then
// publish_kernel's time (its last block's clock reading), after the step.
//
// TCA_BFS_AHEAD=0: the host chooses each level's direction from the counts of the level before,
// which come to the host at the end of each level (one synchronization per level); eight graphs
// (direction x frontier parity x whether the level gathers first).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/cuda_util.h"
#include "cuda/device_graph.h"
#include "cuda/level_kernels.h"
#include "cuda/timeline_cuda.h"
#include "engine.h"

namespace bfs {

struct EngineTuning {
  int lanes = 1;       // lanes per vertex in bottom-up steps: 1, 2, 4, 8, 16 or 32
  bool graphs = true;  // levels as CUDA graphs where the exchange allows
  int ahead = 1;       // pipelined levels launched before the host reads a level's counts (0: none)
  bool early = true;   // the levels' kernels launched while the one before runs (TCA_BFS_EARLY)
  bool push = true;    // pipelined levels store the frontier into the peers' copies where the
                       // exchange allows (TCA_BFS_PUSH)
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
  bool run_levels(Exchange& exchange, const LoopStart& start, std::vector<LevelRecord>& levels,
                  int64_t& reached) override;
  void synchronize() override;
  Timeline& timeline() override { return timeline_; }
  uint64_t visited_tuple_ends() override;

 private:
  struct LevelGraph {
    cudaGraphExec_t exec = nullptr;
    // Start, after the gather, after the step, after the counts (none where the kernels' clock
    // readings time the level).
    cudaEvent_t marks[4] = {};
  };

  // Pipelined levels: the first level's graph, then kCopies graphs taken in turn.
  static constexpr int kCopies = 4;
  static constexpr int kSlotWords = 16;  // what a pipelined level tells the host (finish_kernel)

  // The search's start in stream order: the per-search arrays set back, the root set.
  void enqueue_begin();
  // Pipelined levels: the same as the first nodes of level 0's graph (the root from start_host_).
  void enqueue_pipelined_start(const Heuristic& heuristic);
  // Enqueues a step; `advance`: the level number moves on first (every level but the first).
  void enqueue_step(Direction direction, int parity, bool advance);
  // Enqueues both directions' step kernels, each doing nothing unless the GPU chose its direction.
  void enqueue_gated_step(int parity);
  StepArgs step_args(int parity, bool gated) const;
  // Captures a level's graph: the marks around the gather, the step and the flag (`marked`).
  template <class Gather, class Step, class Flag>
  void capture(LevelGraph& graph, bool marked, Gather gather, Step step, Flag flag);
  void capture(LevelGraph& graph, Direction direction, int parity, bool gathers);
  bool capture_pipeline(const Heuristic& heuristic);
  LevelGraph& pipelined(int level) { return pipeline_[level == 0 ? 0 : 1 + (level - 1) % kCopies]; }
  const volatile long long* slot(int level) const {
    return slots_.data() + (level == 0 ? 0 : 1 + (level - 1) % kCopies) * kSlotWords;
  }
  // Adds the level's record and times from its slot; returns the vertices it found.
  long long record_level(int level, std::vector<LevelRecord>& records);
  // The times of a level's graph, and the turn since the level before, on the timeline.
  void add_level_times(const LevelGraph& graph, int level);
  // The same from a pipelined level's slot, where the kernels' clock readings time it.
  void add_stamped_times(const volatile long long* told, int level);
  // Waits until the slot of `level` holds the sequence number `expected`.
  void wait_for_slot(int level, long long expected) const;
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
  DeviceArray<uint64_t> chunks_;             // top-down: (vertex, chunk) of the frontier's arcs
  DeviceArray<unsigned long long> scalars_;  // chunk count, level, tuple-end sum, loop state
  PinnedArray<unsigned long long> sum_host_;
  PinnedArray<long long> slots_;  // kSlotWords per pipelined graph, written by the GPU
  CudaTimeline timeline_;
  LevelGraph graphs_[2][2][2];  // [direction][parity][gathers]
  LevelGraph pipeline_[1 + kCopies];
  long long* slots_device_ = nullptr;
  const PushedFrontiers* pushed_ = nullptr;  // pipelined levels push the frontier (else gather)
  DeviceArray<unsigned> blocks_done_;        // publish_kernel's count of blocks, 0 between
  vertex_t root_ = 0;                        // the search's root
  // The search's start is left to the first pipelined graph (begin_search), until run_levels.
  bool begin_pending_ = false;
  PinnedArray<long long> start_host_;  // the root's words start_kernel reads (kRoot ..)
  long long* start_device_ = nullptr;
  Heuristic captured_;
  bool pipeline_ready_ = false, pipeline_failed_ = false;
  bool stamped_ = false;             // pipelined levels timed by their kernels' clock readings
  unsigned long long launches_ = 0;  // pipelined graphs launched (the GPU counts them too)
  cudaEvent_t previous_end_ = nullptr;
  long long previous_end_ns_ = 0;  // stamped_: the GPU's clock at the end of the level before
};

}  // namespace bfs
