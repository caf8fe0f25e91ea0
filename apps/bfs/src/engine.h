// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A compute backend: the BFS steps on this rank's part of the graph (CPU threads or CUDA).
#pragma once

#include <cstdint>
#include <vector>

#include "common.h"
#include "direction.h"
#include "exchange.h"
#include "timeline.h"

namespace bfs {

struct LevelRecord {
  Direction direction = Direction::kTopDown;
  int64_t frontier = 0;       // vertices in the frontier the level starts from
  int64_t frontier_arcs = 0;  // their arcs
  PhaseSeconds seconds{};     // compute, flag, out of the level (this rank's)
  // With --levels: the level's compute over the ranks (the slowest rank's is what the others'
  // COMM.FLAG waits for).
  double compute_min = 0, compute_max = 0;
  int slowest_rank = -1;
};

// What a search's level loop starts from.
struct LoopStart {
  SearchSettings settings;
  uint64_t vertices = 0;    // of the graph (the heuristic's N)
  int64_t root_degree = 0;  // the root's arcs: the first frontier's
  uint64_t total_arcs = 0;  // of the graph
};

class Engine {
 public:
  virtual ~Engine() = default;

  // Clears the tree and the visited set and makes frontier(0) = {root} on every rank (the root's
  // owner also gives it itself as parent, level 0).
  virtual void begin_search(vertex_t root) = 0;
  // One level's computation: from the gathered frontier(parity), the vertices joining at level
  // `level` + 1 go into this rank's block of frontier(parity ^ 1), with parents and levels,
  // and their number and arcs into the exchange's counts.
  virtual void step(Direction direction, int level, int parity) = 0;
  // A whole level: the frontier of the level before gathered (COMM.OUT; not at level 0), the
  // step, and the counts summed over the ranks and brought to the host (COMM.FLAG), with the
  // times marked on the timeline. This form makes the calls one by one; the GPU engine replays
  // them as one CUDA graph where the exchange only enqueues work.
  virtual Counts run_level(Exchange& exchange, Direction direction, int level, int parity);
  // The whole level loop after begin_search, where the engine runs it itself: fills `levels`
  // (one record per level, the last one found nothing new) and `reached` (vertices in the tree),
  // with the times on the timeline, and returns true once the tree is complete. False where it
  // does not (then the caller chooses the directions and calls run_level level by level).
  virtual bool run_levels(Exchange& exchange, const LoopStart& start,
                          std::vector<LevelRecord>& levels, int64_t& reached) {
    (void)exchange, (void)start, (void)levels, (void)reached;
    return false;
  }
  // Waits until everything enqueued has completed (GPU ranks; CPU ranks are always done).
  virtual void synchronize() = 0;
  virtual Timeline& timeline() = 0;
  // The tuple ends of this rank's vertices in the tree (nedge is half their sum over ranks).
  virtual uint64_t visited_tuple_ends() = 0;
};

}  // namespace bfs
