// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The 1D partition of the vertices over the ranks, and of the input tuples.
//
// Rank r owns the global ids [r * per, min(N, (r + 1) * per)), per = ceil(N / P) rounded up to a
// multiple of kAlignBits, so that every rank's share of a vertex bitmap is a whole number of
// 64-byte lines: the frontier bitmap of all ranks is the concatenation of their blocks and is
// indexed by the global id itself. The last ranks may own fewer vertices (or none, for tiny
// graphs). Input tuples are split evenly by position: rank r holds [M r / P, M (r + 1) / P).
#pragma once

#include <algorithm>
#include <cstdint>

#include "common.h"

namespace bfs {

struct Range {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t size() const { return last - first; }
};

// Rank `rank`'s share of `count` items split evenly over `ranks`.
inline Range even_share(uint64_t count, int rank, int ranks) {
  const auto at = [&](int r) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(count) * r) / ranks);
  };
  return Range{at(rank), at(rank + 1)};
}

class Partition {
 public:
  static constexpr uint64_t kAlignBits = 512;

  Partition() = default;
  Partition(uint64_t vertices, int ranks) : n_(vertices), ranks_(ranks) {
    const uint64_t share = (vertices + ranks - 1) / ranks;
    per_ = std::max<uint64_t>(kAlignBits, (share + kAlignBits - 1) / kAlignBits * kAlignBits);
  }

  BFS_HD uint64_t vertices() const { return n_; }
  BFS_HD int ranks() const { return ranks_; }
  // Vertices per rank in the bitmap layout (the last ranks own fewer).
  BFS_HD uint64_t per_rank() const { return per_; }
  // Bits of a global vertex bitmap: ranks * per_rank.
  BFS_HD uint64_t padded() const { return per_ * static_cast<uint64_t>(ranks_); }
  BFS_HD int owner(uint64_t v) const { return static_cast<int>(v / per_); }
  BFS_HD uint64_t first(int rank) const { return min_u64(n_, per_ * rank); }
  BFS_HD uint64_t count(int rank) const { return min_u64(n_, per_ * (rank + 1)) - first(rank); }

 private:
  BFS_HD static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

  uint64_t n_ = 0;
  int ranks_ = 1;
  uint64_t per_ = kAlignBits;
};

}  // namespace bfs
