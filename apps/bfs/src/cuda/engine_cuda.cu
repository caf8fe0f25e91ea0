// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include <cstdio>

#include "cuda/engine_cuda.h"

namespace bfs {

CudaEngine::CudaEngine(const DeviceGraph& graph, Exchange& exchange, cudaStream_t stream,
                       EngineTuning tuning)
    : graph_(graph),
      exchange_(exchange),
      stream_(stream),
      tuning_(tuning),
      block_words_(graph.partition.per_rank() / 32),
      parents_(exchange.parents() + graph.rank * graph.partition.per_rank()),
      levels_(exchange.levels() + graph.rank * graph.partition.per_rank()),
      visited_(graph.partition.per_rank() / 32),
      chunks_(graph.partition.padded() + graph.local_arcs / kChunkArcs + 1),
      scalars_(kScalars),
      sum_host_(1),
      slots_((1 + kCopies) * kSlotWords),
      timeline_(stream),
      blocks_done_(1),
      start_host_(4) {
  zero_sync(scalars_.data(), scalars_.bytes(), stream_);
  zero_sync(blocks_done_.data(), blocks_done_.bytes(), stream_);
  for (size_t i = 0; i < slots_.size(); ++i) slots_.data()[i] = 0;
  check_cuda(cudaHostGetDevicePointer(reinterpret_cast<void**>(&slots_device_), slots_.data(), 0),
             "cudaHostGetDevicePointer");
  for (size_t i = 0; i < start_host_.size(); ++i) start_host_.data()[i] = 0;
  check_cuda(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&start_device_), start_host_.data(), 0),
      "cudaHostGetDevicePointer");
  ordered_ = tuning.graphs ? dynamic_cast<StreamOrdered*>(&exchange) : nullptr;
  if (ordered_ != nullptr && tuning.ahead > 0 && tuning.push)
    pushed_ = ordered_->pushed_frontiers();  // the same answer on every rank
  // Pipelined levels capture their graphs at the first search, which brings the heuristic.
  if (ordered_ == nullptr || tuning.ahead > 0) return;
  try {
    for (int d = 0; d < 2; ++d)
      for (int parity = 0; parity < 2; ++parity)
        for (int gathers = 0; gathers < 2; ++gathers)
          capture(graphs_[d][parity][gathers], static_cast<Direction>(d), parity, gathers != 0);
  } catch (const Error& e) {
    // Every rank captures the same calls, so every rank falls back alike.
    release_graphs();
    ordered_ = nullptr;
    cudaGetLastError();
    if (graph.rank == 0)
      std::fprintf(stderr, "# levels launched call by call: capturing them failed (%s)\n",
                   e.what());
  }
}

CudaEngine::~CudaEngine() { release_graphs(); }

void CudaEngine::release_graphs() {
  const auto release = [](LevelGraph& g) {
    if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
    for (cudaEvent_t& e : g.marks)
      if (e != nullptr) cudaEventDestroy(e);
    g = LevelGraph{};
  };
  for (auto& by_direction : graphs_)
    for (auto& by_parity : by_direction)
      for (LevelGraph& g : by_parity) release(g);
  for (LevelGraph& g : pipeline_) release(g);
  pipeline_ready_ = false;
}

template <class Gather, class Step, class Flag>
void CudaEngine::capture(LevelGraph& g, bool marked, Gather gather, Step step, Flag flag) {
  if (marked)
    for (cudaEvent_t& e : g.marks) check_cuda(cudaEventCreate(&e), "cudaEventCreate");
  const auto mark = [&](int i) {
    if (!marked) return;
    check_cuda(cudaEventRecordWithFlags(g.marks[i], stream_, cudaEventRecordExternal),
               "cudaEventRecordWithFlags");
  };
  check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
             "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    mark(0);
    gather();
    mark(1);
    step();
    mark(2);
    flag();
    mark(3);
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    throw;
  }
  check_cuda(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
  const cudaError_t made = cudaGraphInstantiate(&g.exec, graph, 0);
  cudaGraphDestroy(graph);
  check_cuda(made, "cudaGraphInstantiate");
}

void CudaEngine::capture(LevelGraph& g, Direction direction, int parity, bool gathers) {
  capture(
      g, true,
      [&] {
        if (gathers) exchange_.gather_frontier(parity);
      },
      [&] { enqueue_step(direction, parity, gathers); }, [&] { ordered_->enqueue_counts(); });
}

bool CudaEngine::capture_pipeline(const Heuristic& h) {
  for (LevelGraph& g : pipeline_) {
    if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
    for (cudaEvent_t& e : g.marks)
      if (e != nullptr) cudaEventDestroy(e);
    g = LevelGraph{};
  }
  // The levels' times come from the kernels' clock readings where the gather's start is one of
  // them (tca) or no gather comes first (pushed frontiers), else from events recorded in the
  // graphs (nccl).
  stamped_ = pushed_ != nullptr || ordered_->stamps_gather();
  try {
    for (int copy = 0; copy <= kCopies; ++copy) {
      // Copy 0 runs level 0 (no gather: every rank set the root itself); copy c > 0 runs the
      // levels c, c + kCopies, ..., whose frontier parity is that of c.
      const int parity = copy & 1;
      const bool gathers = copy > 0;
      long long* slot = slots_device_ + copy * kSlotWords;
      capture(
          pipeline_[copy], !stamped_,
          [&] {
            if (copy == 0) enqueue_pipelined_start(h);
            if (gathers && pushed_ == nullptr)
              ordered_->enqueue_gather(parity, scalars_.data() + kDone, scalars_.data() + kStarted);
          },
          [&] {
            enqueue_gated_step(parity);
            if (pushed_ == nullptr) return;
            launch_publish(step_args(parity, true), tuning_.early, stream_);
          },
          [&] {
            ordered_->enqueue_reduce();
            launch_finish(reinterpret_cast<const long long*>(ordered_->device_sums()),
                          reinterpret_cast<unsigned long long*>(exchange_.counts()),
                          scalars_.data(), slot, h, pushed_ != nullptr, tuning_.early, stream_);
          });
    }
  } catch (const Error& e) {
    // Every rank captures the same calls, so every rank falls back alike.
    for (LevelGraph& g : pipeline_) {
      if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
      g.exec = nullptr;
    }
    cudaGetLastError();
    pipeline_failed_ = true;
    pushed_ = nullptr;
    if (graph_.rank == 0)
      std::fprintf(stderr, "# levels chosen by the host: capturing pipelined levels failed (%s)\n",
                   e.what());
    return false;
  }
  captured_ = h;
  pipeline_ready_ = true;
  return true;
}

long long CudaEngine::record_level(int level, std::vector<LevelRecord>& records) {
  const volatile long long* told = slot(level);
  LevelRecord record;
  record.direction = told[2] != 0 ? Direction::kBottomUp : Direction::kTopDown;
  record.frontier = told[3];
  record.frontier_arcs = told[4];
  records.push_back(record);
  if (stamped_)
    add_stamped_times(told, level);
  else
    add_level_times(pipelined(level), level);
  return told[0];
}

void CudaEngine::begin_search(vertex_t root) {
  root_ = root;
  // Pipelined levels start the search in level 0's graph: no launch of its own, where the
  // stream-ordered start costs six (the first level took 21-28 us less so on 2 H200s at scale 24).
  begin_pending_ = true;
  if (tuning_.ahead > 0 && ordered_ != nullptr && !pipeline_failed_) return;
  enqueue_begin();
}

void CudaEngine::enqueue_begin() {
  begin_pending_ = false;
  const vertex_t root = root_;
  const uint64_t per = graph_.partition.per_rank();
  check_cuda(cudaMemsetAsync(visited_.data(), 0, visited_.bytes(), stream_), "cudaMemsetAsync");
  check_cuda(cudaMemsetAsync(parents_, 0xFF, per * sizeof(int64_t), stream_), "cudaMemsetAsync");
  check_cuda(cudaMemsetAsync(levels_, 0xFF, per * sizeof(int32_t), stream_), "cudaMemsetAsync");
  check_cuda(cudaMemsetAsync(exchange_.frontier(0), 0, graph_.partition.padded() / 8, stream_),
             "cudaMemsetAsync");
  const bool mine = graph_.partition.owner(root) == graph_.rank;
  const int64_t local_root =
      mine ? static_cast<int64_t>(root - graph_.partition.first(graph_.rank)) : -1;
  launch_root(reinterpret_cast<uint32_t*>(exchange_.frontier(0)), root, local_root, parents_,
              levels_, visited_.data(), scalars_.data(), stream_);
}

void CudaEngine::enqueue_pipelined_start(const Heuristic& h) {
  const uint64_t per = graph_.partition.per_rank();
  SearchStart s;
  s.fills[0] = {visited_.data(), visited_.size(), 0};
  s.fills[1] = {reinterpret_cast<uint32_t*>(parents_), per * 2, 0xFFFFFFFFu};
  s.fills[2] = {reinterpret_cast<uint32_t*>(levels_), per, 0xFFFFFFFFu};
  s.fills[3] = {reinterpret_cast<uint32_t*>(exchange_.frontier(0)), graph_.partition.padded() / 32,
                0};
  s.start = start_device_;
  launch_start(s, scalars_.data(), stream_);
  launch_init(step_args(0, true), h, stream_);
}

void CudaEngine::step(Direction direction, int level, int parity) {
  if (begin_pending_) enqueue_begin();
  enqueue_step(direction, parity, level > 0);
}

StepArgs CudaEngine::step_args(int parity, bool gated) const {
  const DeviceGraph& g = graph_;
  StepArgs a;
  a.row_offsets = g.row_offsets.data();
  a.columns = g.columns.data();
  a.td_offsets = g.td_offsets_or_rows();
  a.td_columns = g.td_columns_or_columns();
  a.frontier = reinterpret_cast<const uint32_t*>(exchange_.frontier(parity));
  a.next = reinterpret_cast<uint32_t*>(exchange_.frontier(parity ^ 1)) + g.rank * block_words_;
  a.visited = visited_.data();
  a.parents = parents_;
  a.levels = levels_;
  a.counts = reinterpret_cast<unsigned long long*>(exchange_.counts());
  a.chunks = chunks_.data();
  a.scalars = scalars_.data();
  a.local_vertices = g.local_vertices;
  a.words = block_words_;
  a.global_words = g.partition.padded() / 32;
  a.gated = gated;
  a.pushed = gated && pushed_ != nullptr;
  a.rank = g.rank;
  a.ranks = g.partition.ranks();
  for (int b = 0; b < kPushedBuffers; ++b) a.buffers[b] = a.pushed ? pushed_->local[b] : nullptr;
  a.views = a.pushed ? pushed_->views : nullptr;
  a.blocks_done = blocks_done_.data();
  a.chunk_capacity = chunks_.size();
  return a;
}

void CudaEngine::enqueue_step(Direction direction, int parity, bool advance) {
  const StepArgs a = step_args(parity, false);
  launch_prepare(a, advance, tuning_.early, stream_);
  if (direction == Direction::kBottomUp) {
    launch_bottom_up_lanes(tuning_.lanes, a, tuning_.early, stream_);
    return;
  }
  check_cuda(cudaMemsetAsync(a.next, 0, block_words_ * sizeof(uint32_t), stream_),
             "cudaMemsetAsync");
  launch_top_down(a, tuning_.early, stream_);
}

void CudaEngine::enqueue_gated_step(int parity) {
  const StepArgs a = step_args(parity, true);
  launch_top_down(a, tuning_.early, stream_);
  launch_bottom_up_lanes(tuning_.lanes, a, tuning_.early, stream_);
}

double CudaEngine::elapsed(cudaEvent_t from, cudaEvent_t to) const {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return ms * 1e-3;
}

void CudaEngine::add_level_times(const LevelGraph& g, int level) {
  // The graph's nodes, and the turn since the level before (the counts' way to the next level:
  // the host's round trip where the host chooses, the gap between two graphs where the GPU does).
  const double turn = elapsed(previous_end_, g.marks[0]);
  if (level > 0) {
    timeline_.add(Phase::kFlag, level - 1, turn);
    timeline_.add(Phase::kOut, level - 1, elapsed(g.marks[0], g.marks[1]));
  } else {
    timeline_.add(Phase::kCompute, 0, turn + elapsed(g.marks[0], g.marks[1]));  // + the start
  }
  timeline_.add(Phase::kCompute, level, elapsed(g.marks[1], g.marks[2]));
  timeline_.add(Phase::kFlag, level, elapsed(g.marks[2], g.marks[3]));
  previous_end_ = g.marks[3];
}

void CudaEngine::add_stamped_times(const volatile long long* told, int level) {
  // As add_level_times, from the level's clock readings (ns): its start (level 0: the start of
  // the search's levels), its step's start and end, and its end. Pushed frontiers: no gather
  // starts a level; the level's own stores into the peers (publish_kernel) are its output.
  const long long started = told[6], stepping = told[7], stepped = told[8], ended = told[9];
  if (pushed_ != nullptr) {
    const long long published = told[10];
    if (level > 0)
      timeline_.add(Phase::kFlag, level - 1, (started - previous_end_ns_) * 1e-9);
    else
      timeline_.add(Phase::kCompute, 0, (stepping - started) * 1e-9);
    timeline_.add(Phase::kCompute, level, (stepped - stepping) * 1e-9);
    timeline_.add(Phase::kOut, level, (published - stepped) * 1e-9);
    timeline_.add(Phase::kFlag, level, (ended - published) * 1e-9);
    previous_end_ns_ = ended;
    return;
  }
  if (level > 0) {
    timeline_.add(Phase::kFlag, level - 1, (started - previous_end_ns_) * 1e-9);
    timeline_.add(Phase::kOut, level - 1, (stepping - started) * 1e-9);
  } else {
    timeline_.add(Phase::kCompute, 0, (stepping - started) * 1e-9);
  }
  timeline_.add(Phase::kCompute, level, (stepped - stepping) * 1e-9);
  timeline_.add(Phase::kFlag, level, (ended - stepped) * 1e-9);
  previous_end_ns_ = ended;
}

void CudaEngine::wait_for_slot(int level, long long expected) const {
  const volatile long long* told = slot(level);
  for (unsigned spins = 1; told[5] != expected; ++spins) {
    if (spins % 1024 != 0) continue;  // the GPU writes the sequence number last
    const cudaError_t state = cudaStreamQuery(stream_);
    if (state != cudaSuccess && state != cudaErrorNotReady) check_cuda(state, "cudaStreamQuery");
    if (state == cudaSuccess && told[5] != expected)
      throw Error("pipelined level " + std::to_string(level) + ": the GPU's sequence number " +
                  std::to_string(told[5]) + " is not the expected " + std::to_string(expected));
  }
}

Counts CudaEngine::run_level(Exchange& exchange, Direction direction, int level, int parity) {
  const LevelGraph& g = graphs_[static_cast<int>(direction)][parity][level > 0 ? 1 : 0];
  if (begin_pending_) enqueue_begin();
  if (ordered_ == nullptr || &exchange != &exchange_ || g.exec == nullptr)
    return Engine::run_level(exchange, direction, level, parity);
  if (level == 0) previous_end_ = timeline_.last_event();
  check_cuda(cudaGraphLaunch(g.exec, stream_), "cudaGraphLaunch");
  synchronize();
  add_level_times(g, level);
  return ordered_->host_sums();
}

bool CudaEngine::run_levels(Exchange& exchange, const LoopStart& start,
                            std::vector<LevelRecord>& records, int64_t& reached) {
  if (tuning_.ahead <= 0 || ordered_ == nullptr || &exchange != &exchange_ || pipeline_failed_) {
    if (begin_pending_) enqueue_begin();
    return false;
  }
  Heuristic h;
  h.alpha = start.settings.alpha;
  h.beta = start.settings.beta;
  h.mode = static_cast<int>(start.settings.mode);
  h.vertices = start.vertices;
  if ((!pipeline_ready_ || !(h == captured_)) && !capture_pipeline(h)) {
    if (begin_pending_) enqueue_begin();
    return false;
  }
  // Level 0's graph starts the search (start_kernel reads these words; the previous search's
  // graphs have all run).
  const bool mine = graph_.partition.owner(root_) == graph_.rank;
  long long* words = start_host_.data();
  words[0] = static_cast<long long>(root_);
  words[1] = mine ? static_cast<long long>(root_ - graph_.partition.first(graph_.rank)) : -1;
  words[2] = start.root_degree;
  words[3] = static_cast<long long>(start.total_arcs) - static_cast<long long>(start.root_degree);
  begin_pending_ = false;
  previous_end_ = timeline_.last_event();
  const unsigned long long first = launches_;  // the sequence number of level 0's graph, less 1
  int launched = -1;
  reached = 1;
  int last = 0;
  for (int level = 0;; ++level) {
    // Levels after the last one find the search done and do nothing.
    while (launched < level + tuning_.ahead) {
      check_cuda(cudaGraphLaunch(pipelined(++launched).exec, stream_), "cudaGraphLaunch");
      ++launches_;
    }
    const LevelGraph& g = pipelined(level);
    if (!stamped_) check_cuda(cudaEventSynchronize(g.marks[3]), "cudaEventSynchronize");
    wait_for_slot(level, static_cast<long long>(first + level + 1));
    const long long found = record_level(level, records);
    last = level;
    if (found == 0) break;
    reached += found;
  }
  // What the levels launched past the last cost is the flag's: they ran before it was known.
  synchronize();
  if (launched > last && stamped_)
    timeline_.add(Phase::kFlag, last, (slot(launched)[9] - previous_end_ns_) * 1e-9);
  else if (launched > last)
    timeline_.add(Phase::kFlag, last,
                  elapsed(pipelined(last).marks[3], pipelined(launched).marks[3]));
  return true;
}

void CudaEngine::synchronize() {
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

uint64_t CudaEngine::visited_tuple_ends() {
  unsigned long long* sum = scalars_.data() + kTupleEnds;
  check_cuda(cudaMemsetAsync(sum, 0, 2 * sizeof(unsigned long long), stream_), "cudaMemsetAsync");
  launch_tuple_ends(parents_, graph_.tuple_ends.data(), graph_.local_vertices, sum, stream_);
  check_cuda(cudaMemcpyAsync(sum_host_.data(), sum, sizeof(unsigned long long),
                             cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync");
  synchronize();
  return sum_host_.data()[0];
}

}  // namespace bfs
