// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The direction heuristic of the level loop, one code for the host and the GPU (the GPU engine
// chooses each level's direction on the device, tca-bfs's host loop on the host).
//
// Beamer, Asanovic and Patterson ("Direction-optimizing breadth-first search", SC 2012): from
// top-down to bottom-up when the frontier's arcs m_f exceed the arcs still unexplored m_u
// divided by alpha, and back to top-down when the frontier holds fewer than N / beta vertices
// and is shrinking.
#pragma once

#include <cstdint>

#include "common.h"

namespace bfs {

enum class DirectionMode { kAuto = 0, kTopDown = 1, kBottomUp = 2 };

struct SearchSettings {
  double alpha = 14;
  double beta = 24;
  DirectionMode mode = DirectionMode::kAuto;
};

// The direction of the next level, from the one before (`current`) and the frontier it starts
// from: `frontier` vertices with `frontier_arcs` arcs, the frontier before it, the arcs not yet
// explored, and the graph's vertices.
BFS_HD Direction next_direction(Direction current, DirectionMode mode, double alpha, double beta,
                                int64_t frontier, int64_t previous_frontier, int64_t frontier_arcs,
                                int64_t unexplored_arcs, uint64_t vertices) {
  if (mode == DirectionMode::kTopDown) return Direction::kTopDown;
  if (mode == DirectionMode::kBottomUp) return Direction::kBottomUp;
  if (current == Direction::kTopDown) {
    const bool heavy =
        static_cast<double>(frontier_arcs) > static_cast<double>(unexplored_arcs) / alpha;
    return heavy ? Direction::kBottomUp : Direction::kTopDown;
  }
  const bool small = static_cast<double>(frontier) < static_cast<double>(vertices) / beta;
  return small && frontier < previous_frontier ? Direction::kTopDown : Direction::kBottomUp;
}

}  // namespace bfs
