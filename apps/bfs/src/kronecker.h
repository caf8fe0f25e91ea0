// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The Graph500 Kronecker (R-MAT) edge generator, one edge at a time.
//
// The specification's generator draws each of the M = edgefactor * 2^SCALE edges independently:
// for every bit of the two endpoints it picks one quadrant of the adjacency matrix with the
// initiator probabilities A, B, C, D (0.57, 0.19, 0.19, 0.05); then it permutes the vertex
// labels and shuffles the list. Here the randomness of edge j, bit b is Philox at counter
// (j, b / 2) under the seed's key (one Philox block gives the two uniform draws of two bits), the
// label permutation is a keyed Feistel bijection of [0, N), and the shuffle is another one of
// [0, M): position i of the list holds edge shuffle(i). So edge i of the list is a pure function
// of (SCALE, edgefactor, seed, i), and every rank, or GPU thread, generates its own share: the
// list is the same whatever the number of ranks.
#pragma once

#include <cmath>
#include <cstdint>

#include "common.h"
#include "rng.h"

namespace bfs {

struct Initiator {
  double a = 0.57;
  double b = 0.19;
  double c = 0.19;  // d = 1 - a - b - c
};

class KroneckerGenerator {
 public:
  KroneckerGenerator() = default;
  KroneckerGenerator(int scale, int64_t edgefactor, uint64_t seed, Initiator initiator = {})
      : scale_(scale),
        edges_(static_cast<uint64_t>(edgefactor) << scale),
        vertex_permutation_(uint64_t{1} << scale, derive_key(seed, 1)),
        edge_shuffle_(static_cast<uint64_t>(edgefactor) << scale, derive_key(seed, 2)) {
    const uint64_t key = derive_key(seed, 3);
    key_[0] = static_cast<uint32_t>(key);
    key_[1] = static_cast<uint32_t>(key >> 32);
    const double ab = initiator.a + initiator.b;
    // A draw u = r / 2^32 with r uniform in [0, 2^32) exceeds p exactly when r > floor(p 2^32).
    ab_ = threshold(ab);
    a_norm_ = threshold(initiator.a / ab);
    c_norm_ = threshold(initiator.c / (1.0 - ab));
  }

  BFS_HD uint64_t vertices() const { return uint64_t{1} << scale_; }
  BFS_HD uint64_t edges() const { return edges_; }

  // The tuple at position `position` (< edges()) of the shuffled, relabelled list.
  BFS_HD Edge edge(uint64_t position) const {
    const uint64_t j = edge_shuffle_(position);
    uint64_t row = 0, column = 0;
    for (int bit = 0; bit < scale_; bit += 2) {
      const Philox4 r = philox4x32(static_cast<uint32_t>(j), static_cast<uint32_t>(j >> 32),
                                   static_cast<uint32_t>(bit >> 1), 0x6B726F6Eu, key_[0], key_[1]);
      for (int half = 0; half < 2 && bit + half < scale_; ++half) {
        const uint64_t row_bit = r.word[2 * half] > ab_ ? 1 : 0;
        const uint64_t column_bit = r.word[2 * half + 1] > (row_bit ? c_norm_ : a_norm_) ? 1 : 0;
        row |= row_bit << (bit + half);
        column |= column_bit << (bit + half);
      }
    }
    return Edge{static_cast<int64_t>(vertex_permutation_(row)),
                static_cast<int64_t>(vertex_permutation_(column))};
  }

 private:
  static uint64_t threshold(double p) {
    if (p <= 0) return 0;
    if (p >= 1) return uint64_t{1} << 32;
    return static_cast<uint64_t>(std::floor(std::ldexp(p, 32)));
  }

  int scale_ = 0;
  uint64_t edges_ = 0;
  FeistelPermutation vertex_permutation_;
  FeistelPermutation edge_shuffle_;
  uint32_t key_[2] = {};
  uint64_t ab_ = 0, a_norm_ = 0, c_norm_ = 0;
};

}  // namespace bfs
