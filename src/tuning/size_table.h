// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The shape every choice by size shares: steps that each hold from a size on, until the next.
// The transport choice keeps its tables in it, the CUDA transport's calibration reads into it,
// and the fixed rules (tuning/rules.h) are listed through it by tca-info.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tca::tuning {

// From `from_bytes` on (until the next step), `value` is chosen.
template <typename T>
struct SizeStep {
  uint64_t from_bytes = 0;
  T value{};
};

template <typename T>
struct SizeTable {
  std::vector<SizeStep<T>> steps;  // ascending from_bytes

  // The value of the last step from at most `bytes`; `none` where no step starts that low.
  T pick(uint64_t bytes, T none) const {
    T chosen = none;
    for (const SizeStep<T>& step : steps)
      if (step.from_bytes <= bytes) chosen = step.value;
    return chosen;
  }

  bool operator==(const SizeTable& other) const {
    if (steps.size() != other.steps.size()) return false;
    for (size_t i = 0; i < steps.size(); ++i)
      if (steps[i].from_bytes != other.steps[i].from_bytes ||
          !(steps[i].value == other.steps[i].value))
        return false;
    return true;
  }
};

}  // namespace tca::tuning
