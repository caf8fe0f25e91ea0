// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The search keys: 64 (or --nbfs) vertices sampled from the seed, or the user's own.
//
// Sampling follows the specification: vertices of degree at least one not counting self-loops,
// no repeats, fewer only when the graph has fewer such vertices. Candidates are the images of
// 0, 1, 2, ... under a keyed bijection of [0, N), tried in that order, so the keys depend on the
// seed and the graph only (not on the number of ranks) and never repeat.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common.h"
#include "partition.h"

namespace bfs {

struct SearchKey {
  vertex_t vertex = 0;
  int64_t degree = 0;  // arcs in the graph (no self-loops, no duplicates)
};

// Degrees of this rank's vertices given by local index (the backend answers).
using LocalDegrees =
    std::function<void(const std::vector<uint64_t>& local, std::vector<int64_t>& degrees)>;

// Collective.
std::vector<SearchKey> sample_keys(const Partition& partition, int rank, uint64_t seed, int count,
                                   const LocalDegrees& degrees);

// Collective: the degrees of `vertices` (any ids below N), on every rank.
std::vector<int64_t> global_degrees(const Partition& partition, int rank,
                                    const std::vector<vertex_t>& vertices,
                                    const LocalDegrees& degrees);

// Collective: the user's keys (--root, then the lines of --roots), checked: each must be a
// vertex with degree >= 1 not counting self-loops. Throws Error naming the bad value.
std::vector<SearchKey> given_keys(const Partition& partition, int rank,
                                  const std::vector<int64_t>& roots, const std::string& roots_file,
                                  const LocalDegrees& degrees);

// The ids of a --roots file: one per line (blank lines allowed). Throws Error naming the line.
std::vector<int64_t> read_roots_file(const std::string& path);

}  // namespace bfs
