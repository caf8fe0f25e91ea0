// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// BLAKE2b as RFC 7693 specifies it: 128-byte blocks, 12 rounds of the G mixing function over a
// 16-word state, a 128-bit byte counter and a final-block flag.
#include "base/blake2b.h"

#include <cstring>

namespace tca {
namespace {

constexpr uint64_t kIv[8] = {0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull,
                             0xa54ff53a5f1d36f1ull, 0x510e527fade682d1ull, 0x9b05688c2b3e6c1full,
                             0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull};

// The message word schedule of each round (rounds 10 and 11 repeat rounds 0 and 1).
constexpr uint8_t kSigma[10][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
};

constexpr size_t kBlockBytes = 128;

uint64_t rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

uint64_t load_le(const uint8_t* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | p[i];
  return value;
}

// Inlined into an unrolled round loop, every index is a constant and the state stays in
// registers.
inline __attribute__((always_inline)) void mix(uint64_t* v, int a, int b, int c, int d, uint64_t x,
                                               uint64_t y) {
  v[a] = v[a] + v[b] + x;
  v[d] = rotr(v[d] ^ v[a], 32);
  v[c] = v[c] + v[d];
  v[b] = rotr(v[b] ^ v[c], 24);
  v[a] = v[a] + v[b] + y;
  v[d] = rotr(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = rotr(v[b] ^ v[c], 63);
}

// One block into the chained state; `counter` is the bytes hashed so far, this block included.
void compress(uint64_t (&h)[8], const uint8_t* block, uint64_t counter, bool last) {
  uint64_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load_le(block + 8 * i);
  uint64_t v[16];
  for (int i = 0; i < 8; ++i) {
    v[i] = h[i];
    v[i + 8] = kIv[i];
  }
  v[12] ^= counter;  // the counter's high word stays 0: inputs here are far below 2^64 bytes
  if (last) v[14] = ~v[14];
#pragma GCC unroll 12
  for (int round = 0; round < 12; ++round) {
    const uint8_t* s = kSigma[round % 10];
    mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; ++i) h[i] ^= v[i] ^ v[i + 8];
}

}  // namespace

void blake2b(const void* data, size_t bytes, uint8_t* out, size_t out_bytes) {
  if (out_bytes == 0 || out_bytes > kBlake2bMaxOutBytes) return;
  uint64_t h[8];
  std::memcpy(h, kIv, sizeof(h));
  h[0] ^= 0x01010000ull ^ out_bytes;  // parameter block: no key, fanout 1, depth 1
  const auto* in = static_cast<const uint8_t*>(data);
  uint64_t counter = 0;
  while (bytes > kBlockBytes) {  // every block but the last, which may be partial
    counter += kBlockBytes;
    compress(h, in, counter, false);
    in += kBlockBytes;
    bytes -= kBlockBytes;
  }
  uint8_t last[kBlockBytes] = {};
  if (bytes > 0) std::memcpy(last, in, bytes);
  counter += bytes;
  compress(h, last, counter, true);
  for (size_t i = 0; i < out_bytes; ++i) out[i] = static_cast<uint8_t>(h[i / 8] >> (8 * (i % 8)));
}

}  // namespace tca
