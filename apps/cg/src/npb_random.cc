// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "npb_random.h"

namespace tca_cg {
namespace {

constexpr uint64_t kModulusMask = (uint64_t{1} << 46) - 1;
constexpr double kTwoToMinus46 = 1.0 / static_cast<double>(uint64_t{1} << 46);

uint64_t multiply_mod_2_46(uint64_t a, uint64_t x) {
  // Both factors are below 2^46: the 128-bit product is exact, and the low 46 bits are the
  // remainder modulo 2^46.
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * x;
  return static_cast<uint64_t>(product) & kModulusMask;
}

}  // namespace

NpbRandom::NpbRandom(uint64_t seed, uint64_t multiplier)
    : x_(seed & kModulusMask), a_(multiplier & kModulusMask) {}

double NpbRandom::next() {
  x_ = multiply_mod_2_46(a_, x_);
  return static_cast<double>(x_) * kTwoToMinus46;
}

double randlc(double* x, double a) {
  const uint64_t next = multiply_mod_2_46(static_cast<uint64_t>(a), static_cast<uint64_t>(*x));
  *x = static_cast<double>(next);
  return *x * kTwoToMinus46;
}

}  // namespace tca_cg
