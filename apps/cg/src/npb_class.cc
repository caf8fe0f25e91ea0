// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "npb_class.h"

#include <array>
#include <cctype>
#include <cmath>

namespace tca_cg {
namespace {

// NPB 3.x CG: NA, NONZER, NITER, SHIFT and the verification value of zeta per class.
constexpr std::array<NpbClass, 6> kClasses = {{
    {'S', 1400, 7, 15, 10.0, 8.5971775078648},
    {'W', 7000, 8, 15, 12.0, 10.362595087124},
    {'A', 14000, 11, 15, 20.0, 17.130235054029},
    {'B', 75000, 13, 75, 60.0, 22.712745482631},
    {'C', 150000, 15, 75, 110.0, 28.973605592845},
    {'D', 1500000, 21, 100, 500.0, 52.514532105794},
}};

}  // namespace

std::optional<NpbClass> find_npb_class(const std::string& name) {
  if (name.size() != 1) return std::nullopt;
  const char letter = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  for (const NpbClass& cls : kClasses) {
    if (cls.name == letter) return cls;
  }
  return std::nullopt;
}

std::string npb_class_names() {
  std::string names;
  for (const NpbClass& cls : kClasses) {
    if (!names.empty()) names += ", ";
    names += cls.name;
  }
  return names;
}

double npb_mops(const NpbClass& cls, double seconds) {
  if (!(seconds > 0.0)) return 0.0;
  // Per outer iteration and row: the 25 CG steps (SpMV of nonzer*(nonzer+1) products and
  // sums, 5 vector operations) plus the residual SpMV and the norms, as NPB counts them.
  const double pairs = static_cast<double>(cls.nonzer) * (cls.nonzer + 1);
  const double per_row = 3.0 + pairs + kNpbCgSteps * (5.0 + pairs) + 3.0;
  return 2.0 * cls.niter * static_cast<double>(cls.na) * per_row / seconds / 1.0e6;
}

double npb_zeta_error(const NpbClass& cls, double zeta) {
  return std::fabs(zeta - cls.zeta_verify) / cls.zeta_verify;
}

bool npb_verified(const NpbClass& cls, double zeta) {
  return npb_zeta_error(cls, zeta) <= kNpbEpsilon;
}

}  // namespace tca_cg
