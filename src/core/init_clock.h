// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Where tcaInit's time goes: named laps of a steady clock, summed up in the "initialized" line
// that TCA_DEBUG=info prints (bootstrap, control blocks, memory domains, each transport, the
// choice by size, the closing barrier).
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace tca {

class InitClock {
 public:
  // The time since the previous lap (or since construction) is charged to `what`.
  void lap(const char* what) {
    const auto now = std::chrono::steady_clock::now();
    laps_.emplace_back(what, std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

  // "init 12.3 ms: bootstrap 4.1, control blocks 0.2, ..." (milliseconds).
  std::string summary() const {
    double total = 0;
    std::string parts;
    for (const auto& [what, ms] : laps_) {
      total += ms;
      parts += fmt::format("{}{} {:.1f}", parts.empty() ? "" : ", ", what, ms);
    }
    return fmt::format("init {:.1f} ms: {}", total, parts);
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<const char*, double>> laps_;
};

}  // namespace tca
