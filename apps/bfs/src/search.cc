// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "search.h"

#include "tca/tca_trace.h"
#include "tca_harness/timer.h"

namespace bfs {
Direction choose_direction(Direction current, const SearchSettings& settings, int64_t frontier,
                           int64_t previous_frontier, int64_t frontier_arcs,
                           int64_t unexplored_arcs, uint64_t vertices) {
  return next_direction(current, settings.mode, settings.alpha, settings.beta, frontier,
                        previous_frontier, frontier_arcs, unexplored_arcs, vertices);
}

SearchResult run_search(Engine& engine, Exchange& exchange, vertex_t root, int64_t root_degree,
                        uint64_t total_arcs, uint64_t vertices, const SearchSettings& settings) {
  SearchResult result;
  result.root = root;
  Timeline& timeline = engine.timeline();
  const tca_harness::Timer started;
  timeline.start();
  engine.begin_search(root);
  timeline.mark(Phase::kCompute, 0);

  LoopStart start;
  start.settings = settings;
  start.vertices = vertices;
  start.root_degree = root_degree;
  start.total_arcs = total_arcs;
  if (engine.run_levels(exchange, start, result.per_level, result.reached)) {
    result.levels = static_cast<int>(result.per_level.size());
  } else {
    Direction direction = Direction::kTopDown;
    int64_t frontier = 1, previous = 0, frontier_arcs = root_degree;
    int64_t unexplored = static_cast<int64_t>(total_arcs) - root_degree;
    int64_t reached = 1;
    int parity = 0, level = 0;
    for (;;) {
      direction = choose_direction(direction, settings, frontier, previous, frontier_arcs,
                                   unexplored, vertices);
      LevelRecord record;
      record.direction = direction;
      record.frontier = frontier;
      record.frontier_arcs = frontier_arcs;
      result.per_level.push_back(record);
      const Counts next = engine.run_level(exchange, direction, level, parity);
      if (next.vertices == 0) break;
      reached += next.vertices;
      previous = frontier;
      frontier = next.vertices;
      frontier_arcs = next.arcs;
      unexplored -= next.arcs;
      parity ^= 1;
      ++level;
    }
    result.levels = level + 1;
    result.reached = reached;
  }
  engine.synchronize();
  result.seconds = started.seconds();

  std::vector<PhaseSeconds> per_level;
  timeline.collect(result.phases, per_level);
  for (size_t l = 0; l < per_level.size() && l < result.per_level.size(); ++l)
    result.per_level[l].seconds = per_level[l];

  const tca_harness::Timer tree_started;
  tcaTracePhaseBegin("COMM.TREE");
  exchange.gather_tree();
  engine.synchronize();
  tcaTracePhaseEnd("COMM.TREE");
  result.phases[static_cast<int>(Phase::kTree)] = tree_started.seconds();
  return result;
}

}  // namespace bfs
