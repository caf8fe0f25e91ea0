// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Counter-based random numbers: every value is a pure function of (key, counter), so any rank
// (or GPU thread) can produce its share of a random stream without producing what comes before.
//
//  - philox4x32: the Philox-4x32-10 generator of Salmon et al., "Parallel random numbers: as
//    easy as 1, 2, 3" (SC 2011): 10 rounds of two 32x32->64 multiplications on a 128-bit
//    counter under a 64-bit key, giving 4 uniform 32-bit words per counter.
//  - mix64: a 64-bit finalizer (the one of SplitMix64) for deriving keys and round functions.
//  - FeistelPermutation: a keyed bijection of [0, n), a balanced Feistel network on the smallest
//    even number of bits that covers n, walked until the value falls inside [0, n) ("cycle
//    walking"; at most 4 walks are expected since the domain is below 4n).
#pragma once

#include <cstdint>

#include "common.h"

namespace bfs {

struct Philox4 {
  uint32_t word[4];
};

BFS_HD void mul_hi_lo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

BFS_HD Philox4 philox4x32(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                          uint32_t k1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kMul0, c0, hi0, lo0);
    mul_hi_lo(kMul1, c2, hi1, lo1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return Philox4{{c0, c1, c2, c3}};
}

BFS_HD uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

// A key for one purpose ("stream") of one seed.
inline uint64_t derive_key(uint64_t seed, uint64_t stream) {
  return mix64(mix64(seed + 0x9E3779B97F4A7C15ull) ^ mix64(stream * 0xD1B54A32D192ED03ull + 1));
}

class FeistelPermutation {
 public:
  static constexpr int kRounds = 6;

  FeistelPermutation() = default;
  FeistelPermutation(uint64_t n, uint64_t key) : n_(n) {
    while (half_bits_ < 32 && (half_bits_ == 0 || (uint64_t{1} << (2 * half_bits_)) < n))
      ++half_bits_;
    for (int round = 0; round < kRounds; ++round)
      keys_[round] = mix64(key + round * 0x632BE59BD9B4E019ull);
  }

  BFS_HD uint64_t size() const { return n_; }

  // The image of x (x < size()).
  BFS_HD uint64_t operator()(uint64_t x) const {
    if (n_ <= 1) return x;
    do x = encrypt(x);
    while (x >= n_);
    return x;
  }

 private:
  BFS_HD uint64_t encrypt(uint64_t x) const {
    const uint64_t mask = (uint64_t{1} << half_bits_) - 1;
    uint64_t left = x >> half_bits_, right = x & mask;
    for (int round = 0; round < kRounds; ++round) {
      const uint64_t next_right = left ^ (mix64(right ^ keys_[round]) & mask);
      left = right;
      right = next_right;
    }
    return (left << half_bits_) | right;
  }

  uint64_t n_ = 0;
  int half_bits_ = 0;
  uint64_t keys_[kRounds] = {};
};

}  // namespace bfs
