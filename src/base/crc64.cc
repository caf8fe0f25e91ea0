// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "base/crc64.h"

#include <array>

namespace tca {
namespace {

constexpr uint64_t kReflectedPolynomial = 0xc96c5795d7870f42ull;  // ECMA-182, bit-reflected

// Slicing by 8: table k holds the CRC of a byte followed by k zero bytes, so the eight bytes
// of a word are looked up independently and combined (table 0 is the one-byte table).
constexpr std::array<std::array<uint64_t, 256>, 8> make_tables() {
  std::array<std::array<uint64_t, 256>, 8> tables{};
  for (uint64_t byte = 0; byte < 256; ++byte) {
    uint64_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kReflectedPolynomial : 0);
    tables[0][byte] = crc;
  }
  for (size_t k = 1; k < 8; ++k)
    for (size_t byte = 0; byte < 256; ++byte)
      tables[k][byte] = (tables[k - 1][byte] >> 8) ^ tables[0][tables[k - 1][byte] & 0xff];
  return tables;
}

constexpr std::array<std::array<uint64_t, 256>, 8> kTables = make_tables();

}  // namespace

uint64_t crc64(const void* data, size_t bytes) {
  const auto* in = static_cast<const unsigned char*>(data);
  uint64_t crc = ~uint64_t{0};
  for (; bytes >= 8; bytes -= 8, in += 8) {
    uint64_t word = 0;
    for (int i = 7; i >= 0; --i) word = word << 8 | in[i];  // little-endian, any alignment
    crc ^= word;
    crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^ kTables[5][(crc >> 16) & 0xff] ^
          kTables[4][(crc >> 24) & 0xff] ^ kTables[3][(crc >> 32) & 0xff] ^
          kTables[2][(crc >> 40) & 0xff] ^ kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
  }
  for (; bytes > 0; --bytes, ++in) crc = kTables[0][(crc ^ *in) & 0xff] ^ (crc >> 8);
  return ~crc;
}

}  // namespace tca
