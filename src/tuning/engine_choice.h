// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The CUDA transport's choice between the copy engines and the SMs, by size. A pair of GPUs
// is calibrated at start-up (transport/cuda/cuda_calibrate.cc measures, engine_rates holds the
// rates): each calibrated size picks the engine that moved it faster, sizes in between the pick
// of the nearest calibrated size below. TCA_CUDA_PATH forces one engine, TCA_CUDA_CROSSOVER a
// size from which the copy engines take over; an unmeasured pair uses kDefaultCrossover.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tuning/size_table.h"

namespace tca::tuning {

// 2D transfers with rows narrower than this go to the SMs: the copy engines pay per row, the
// SMs gather narrow rows into full-width stores.
constexpr uint64_t kNarrowRowBytes = 512;
// The crossover used when a pair could not be measured.
constexpr uint64_t kDefaultCrossover = uint64_t{64} << 10;
constexpr uint64_t kNeverCopyEngine = UINT64_MAX;  // a crossover no transfer reaches

// What a pair's calibration measured: each engine's rate at ascending sizes.
struct EngineRates {
  std::vector<uint64_t> sizes;  // ascending, each twice the previous
  std::vector<double> ce_gbps;  // copy engines: bytes / half round trip
  std::vector<double> sm_gbps;  // SM copy kernel, the same

  // Whether the copy engines were faster at the largest calibrated size not above `bytes` (at
  // the smallest one for smaller transfers; true where nothing was measured).
  bool copy_engine_at(uint64_t bytes) const;
  // The smallest calibrated size from which every larger one picks the copy engines (0: all
  // do; kNeverCopyEngine: the largest picks the SMs).
  uint64_t crossover() const;
  // The same choice as a size table (true: copy engines), for listing.
  SizeTable<bool> table() const;
};

// The choice with the settings that override the measurement.
struct EngineChoice {
  enum class Force { kNone, kCopyEngine, kSm };
  Force force = Force::kNone;                  // TCA_CUDA_PATH ce or sm
  std::optional<uint64_t> crossover_override;  // TCA_CUDA_CROSSOVER

  // Whether a setting decides instead of the calibration.
  bool overridden() const { return force != Force::kNone || crossover_override.has_value(); }
  // Whether a transfer of `bytes` in rows of `row_bytes` takes the copy engines; `rates` is
  // the pair's calibration (nullptr: not measured).
  bool copy_engine(const EngineRates* rates, uint64_t bytes, uint64_t row_bytes) const;
  // The size from which (contiguous) transfers take the copy engines.
  uint64_t crossover(const EngineRates* rates) const;
};

}  // namespace tca::tuning
