// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The CPU backend: the BFS steps on host memory, shared among the threads of the rank.
#pragma once

#include <vector>

#include "engine.h"
#include "graph.h"
#include "parallel.h"

namespace bfs {

class HostEngine final : public Engine {
 public:
  HostEngine(const HostGraph& graph, Exchange& exchange, ThreadPool& pool);

  void begin_search(vertex_t root) override;
  void step(Direction direction, int level, int parity) override;
  void synchronize() override {}
  Timeline& timeline() override { return timeline_; }
  uint64_t visited_tuple_ends() override;

 private:
  // Per-thread counts, a cache line apart.
  struct alignas(64) Partial {
    int64_t vertices = 0;
    int64_t arcs = 0;
  };

  void top_down(int level, const uint64_t* frontier, uint64_t* next);
  void bottom_up(int level, const uint64_t* frontier, uint64_t* next);
  // Local index and global id of this rank's first vertex.
  uint64_t first_global() const { return graph_.partition.first(graph_.rank); }

  const HostGraph& graph_;
  Exchange& exchange_;
  ThreadPool& pool_;
  uint64_t block_words_;       // words of this rank's bitmap block
  uint64_t block_first_word_;  // where it starts in a global bitmap
  std::vector<uint64_t> visited_;
  int64_t* parents_;  // this rank's block of the exchange's tree
  int32_t* levels_;
  std::vector<Partial> partial_;
  HostTimeline timeline_;
};

}  // namespace bfs
