// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The parts of a CG run that are timed separately (the breakdown of the CG slides): SpMV,
// dot products, vector updates, the exchange of the SpMV's input vector (1d: the allgather;
// 2d: the pieces sent along block columns), the 2d reduction of partial products along block
// rows, and the allreduce of dot products.
#pragma once

#include <array>
#include <chrono>

namespace tca_cg {

enum class Phase { kSpmv, kDot, kAxpy, kExchange, kReduce, kAllreduce, kCount, kNone };
inline constexpr int kPhaseCount = static_cast<int>(Phase::kCount);
using PhaseSeconds = std::array<double, kPhaseCount>;
using PhaseCalls = std::array<long, kPhaseCount>;

const char* phase_name(Phase phase);  // "spmv", "dot", "axpy", "exchange", "reduce", "allreduce"

// Attributes time between consecutive marks to the phase of the earlier mark.
class PhaseClock {
 public:
  virtual ~PhaseClock() = default;
  // From now on, time counts for `phase` (kNone: for nothing).
  virtual void mark(Phase phase) = 0;
  // Adds what was measured since the last collect to the totals (may wait for the device).
  virtual void collect() = 0;
  const PhaseSeconds& seconds() const { return seconds_; }
  const PhaseCalls& calls() const { return calls_; }
  void reset() {
    seconds_.fill(0.0);
    calls_.fill(0);
  }

 protected:
  PhaseSeconds seconds_{};
  PhaseCalls calls_{};
};

// Wall-clock marks: for work that is done when the call returns (CPU).
class HostPhaseClock final : public PhaseClock {
 public:
  void mark(Phase phase) override;
  void collect() override {}

 private:
  using Clock = std::chrono::steady_clock;
  Phase current_ = Phase::kNone;
  Clock::time_point since_{};
};

// A clock that measures nothing (timed runs whose breakdown is taken in another run).
class NullPhaseClock final : public PhaseClock {
 public:
  void mark(Phase) override {}
  void collect() override {}
};

}  // namespace tca_cg
