// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The calibration table: every seed figure the fabric descriptions must reproduce, the model's
// value for it (from simulations of the seed's experiment), and the error.
#pragma once

#include <string>
#include <vector>

namespace tca_sim {

struct CalibrationRow {
  std::string figure;  // what was measured
  std::string source;  // seed document and place
  std::string unit;    // "us", "GB/s", "B", "x" (a ratio)
  enum Kind { kValue, kRange, kAtLeast } kind = kValue;
  double seed = 0;       // kValue: the figure; kRange: low end; kAtLeast: the bound
  double seed_high = 0;  // kRange: high end
  double model = 0;
  double error =
      0;  // relative: kValue (model - seed) / seed; kRange: distance outside; kAtLeast: shortfall
  bool pass = false;  // |error| <= tolerance
};

constexpr double kCalibrationTolerance = 0.10;

// Runs every experiment on the descriptions in `fabric_dir`.
std::vector<CalibrationRow> calibrate(const std::string& fabric_dir);

}  // namespace tca_sim
