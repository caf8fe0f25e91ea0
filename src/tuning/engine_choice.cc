// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tuning/engine_choice.h"

namespace tca::tuning {

bool EngineRates::copy_engine_at(uint64_t bytes) const {
  size_t i = 0;
  while (i + 1 < sizes.size() && sizes[i + 1] <= bytes) ++i;
  return !(i < sizes.size() && sm_gbps[i] > ce_gbps[i]);
}

uint64_t EngineRates::crossover() const {
  // Walk down from the largest size while the copy engines are picked.
  size_t first_ce = sizes.size();
  while (first_ce > 0 && copy_engine_at(sizes[first_ce - 1])) --first_ce;
  if (first_ce == sizes.size()) return kNeverCopyEngine;
  return first_ce == 0 ? 0 : sizes[first_ce];
}

SizeTable<bool> EngineRates::table() const {
  SizeTable<bool> table;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const bool copy_engine = copy_engine_at(sizes[i]);
    if (table.steps.empty() || table.steps.back().value != copy_engine)
      table.steps.push_back({table.steps.empty() ? 0 : sizes[i], copy_engine});
  }
  return table;
}

bool EngineChoice::copy_engine(const EngineRates* rates, uint64_t bytes, uint64_t row_bytes) const {
  if (force == Force::kCopyEngine) return true;
  if (force == Force::kSm) return false;
  if (row_bytes < kNarrowRowBytes) return false;
  if (rates != nullptr && !crossover_override) return rates->copy_engine_at(bytes);
  return bytes >= crossover(rates);
}

uint64_t EngineChoice::crossover(const EngineRates* rates) const {
  if (force == Force::kCopyEngine) return 0;
  if (force == Force::kSm) return kNeverCopyEngine;
  if (crossover_override) return *crossover_override;
  return rates != nullptr ? rates->crossover() : kDefaultCrossover;
}

}  // namespace tca::tuning
