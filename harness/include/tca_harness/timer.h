// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Wall-clock timing on the steady clock.
#pragma once

#include <chrono>

namespace tca_harness {

// Seconds on the steady clock since an arbitrary origin (differences are what count).
inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Starts when made; seconds() is the time since then (or since the last restart()).
class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tca_harness
