// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The problem classes of the NPB CG benchmark (NPB 3.x) and what the benchmark computes from
// them: the operation count behind Mop/s and the verification of zeta.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tca_cg {

inline constexpr double kNpbRcond = 0.1;        // bound of the smallest eigenvalue (RCOND)
inline constexpr int kNpbCgSteps = 25;          // CG steps per outer iteration (cgitmax)
inline constexpr double kNpbEpsilon = 1.0e-10;  // verification: relative error of zeta

struct NpbClass {
  char name;           // 'S', 'W', 'A', 'B', 'C', 'D'
  int64_t na;          // rows and columns
  int nonzer;          // nonzeros of each random sparse vector before the diagonal is set
  int niter;           // outer (power) iterations, all timed
  double shift;        // eigenvalue shift
  double zeta_verify;  // the official zeta after niter iterations
};

// The class named by `name` (one letter, either case); nullopt for an unknown name.
std::optional<NpbClass> find_npb_class(const std::string& name);
// The class letters known, for messages: "S, W, A, B, C, D".
std::string npb_class_names();

// NPB's operation count of a whole timed run, in millions, divided by the seconds it took
// (0 when seconds is not positive).
double npb_mops(const NpbClass& cls, double seconds);

// |zeta - zeta_verify| / zeta_verify.
double npb_zeta_error(const NpbClass& cls, double zeta);
bool npb_verified(const NpbClass& cls, double zeta);

}  // namespace tca_cg
