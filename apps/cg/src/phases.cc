// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "phases.h"

namespace tca_cg {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kSpmv:
      return "spmv";
    case Phase::kDot:
      return "dot";
    case Phase::kAxpy:
      return "axpy";
    case Phase::kExchange:
      return "exchange";
    case Phase::kReduce:
      return "reduce";
    case Phase::kAllreduce:
      return "allreduce";
    default:
      return "none";
  }
}

void HostPhaseClock::mark(Phase phase) {
  const Clock::time_point now = Clock::now();
  if (current_ != Phase::kNone) {
    seconds_[static_cast<int>(current_)] += std::chrono::duration<double>(now - since_).count();
  }
  if (phase != Phase::kNone) ++calls_[static_cast<int>(phase)];
  current_ = phase;
  since_ = now;
}

}  // namespace tca_cg
