// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// NPB CG's outer power iteration, serially and from the specification, with any SpMV: the
// reference the tests check the engines' zeta against.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "npb_class.h"

namespace tca_cg {

// NPB's zeta after cls.niter outer iterations, with `multiply` as the SpMV.
template <class Multiply>
inline double power_iteration_zeta(const NpbClass& cls, Multiply&& multiply) {
  const int64_t n = cls.na;
  std::vector<double> x(n, 1.0), z(n), p(n), q(n), r(n);
  auto dot = [n](const std::vector<double>& u, const std::vector<double>& v) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += u[i] * v[i];
    return s;
  };
  double zeta = 0;
  for (int it = 1; it <= cls.niter; ++it) {
    std::fill(z.begin(), z.end(), 0.0);
    r = x;
    p = r;
    double rho = dot(r, r);
    for (int step = 0; step < kNpbCgSteps; ++step) {
      multiply(p.data(), q.data());
      const double alpha = rho / dot(p, q);
      const double previous = rho;
      for (int64_t i = 0; i < n; ++i) {
        z[i] += alpha * p[i];
        r[i] -= alpha * q[i];
      }
      rho = dot(r, r);
      for (int64_t i = 0; i < n; ++i) p[i] = r[i] + rho / previous * p[i];
    }
    zeta = cls.shift + 1.0 / dot(x, z);
    const double scale = 1.0 / std::sqrt(dot(z, z));
    for (int64_t i = 0; i < n; ++i) x[i] = scale * z[i];
  }
  return zeta;
}

}  // namespace tca_cg
