// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernel 2's level loop (shared by both backends): direction-optimizing, level-synchronous BFS.
//
// Each level starts in the direction Beamer, Asanovic and Patterson's heuristic picks
// (direction.h). Engines that can run the whole loop themselves (Engine::run_levels: the GPU
// engine, with the direction chosen on the device) do; the others are driven level by level.
#pragma once

#include <cstdint>
#include <vector>

#include "engine.h"
#include "exchange.h"
#include "timeline.h"

namespace bfs {

struct SearchResult {
  vertex_t root = 0;
  int levels = 0;         // levels of the tree (the root's is level 0)
  int64_t reached = 0;    // vertices in the tree
  double seconds = 0;     // the search (kernel 2), as the specification times it
  PhaseSeconds phases{};  // compute, flag, out during the search; tree after it
  std::vector<LevelRecord> per_level;
};

// Runs one search from `root` (whose degree is `root_degree`), then gathers the tree
// (COMM.TREE, timed apart). `total_arcs` and `vertices` feed the heuristic.
SearchResult run_search(Engine& engine, Exchange& exchange, vertex_t root, int64_t root_degree,
                        uint64_t total_arcs, uint64_t vertices, const SearchSettings& settings);

// The heuristic's choice for the next level.
Direction choose_direction(Direction current, const SearchSettings& settings, int64_t frontier,
                           int64_t previous_frontier, int64_t frontier_arcs,
                           int64_t unexplored_arcs, uint64_t vertices);

}  // namespace bfs
