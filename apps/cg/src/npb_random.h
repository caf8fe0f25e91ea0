// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The pseudo-random generator of the NAS Parallel Benchmarks (randlc): the linear congruential
// sequence x(k+1) = a * x(k) mod 2^46, each value returned as x(k+1) * 2^-46 in (0, 1).
// NPB states it on doubles split into 23-bit halves; every step is exact there, so integer
// arithmetic gives the same sequence bit for bit.
#pragma once

#include <cstdint>

namespace tca_cg {

// The CG benchmark's seed and multiplier (NPB: tran, amult).
inline constexpr uint64_t kNpbSeed = 314159265;
inline constexpr uint64_t kNpbMultiplier = 1220703125;

class NpbRandom {
 public:
  explicit NpbRandom(uint64_t seed = kNpbSeed, uint64_t multiplier = kNpbMultiplier);

  // Advances the sequence and returns the new value times 2^-46.
  double next();
  // The current x (an integer below 2^46).
  uint64_t state() const { return x_; }

 private:
  uint64_t x_;
  uint64_t a_;
};

// NPB's own interface: *x (an integral double below 2^46) becomes a * *x mod 2^46 and the
// result is *x * 2^-46. a must be an integral double below 2^46 too.
double randlc(double* x, double a);

}  // namespace tca_cg
