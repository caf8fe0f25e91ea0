// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Bit access to the vertex bitmaps (64-bit words, bit v % 64 of word v / 64), host and device.
#pragma once

#include <cstdint>

#include "common.h"

namespace bfs {

BFS_HD bool test_bit(const uint64_t* words, uint64_t index) {
  return (words[index >> 6] >> (index & 63)) & 1u;
}

BFS_HD uint64_t bit_of(uint64_t index) { return uint64_t{1} << (index & 63); }

// The bits of word `word` that stand for indices below `count`.
BFS_HD uint64_t valid_bits(uint64_t word, uint64_t count) {
  const uint64_t first = word * 64;
  if (first >= count) return 0;
  const uint64_t left = count - first;
  return left >= 64 ? ~uint64_t{0} : (uint64_t{1} << left) - 1;
}

}  // namespace bfs
