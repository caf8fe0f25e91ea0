// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Statistics of repeated measurements (timed batches, per-search rates).
#pragma once

#include <cstddef>
#include <vector>

namespace tca_harness {

// Quartiles are taken at the positions (n+1)p of the sorted values (1-based), interpolated
// between neighbours and clamped to the smallest and largest: the median is the middle value,
// or the mean of the two middle values. stddev is the sample standard deviation (n-1; 0 for
// one value). The harmonic mean and its standard deviation are as the Graph500 output asks
// for rates (TEPS): harmonic_mean = n / sum(1/x), and, after Norris (1940),
// harmonic_stddev = sqrt(sum((1/x - m)^2)) / (n-1) * harmonic_mean^2 with m = mean of 1/x
// (0 for one value). Both need positive values; with any value <= 0 they are NaN.
struct Summary {
  size_t count = 0;
  double min = 0;
  double first_quartile = 0;
  double median = 0;
  double third_quartile = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;
  double harmonic_mean = 0;
  double harmonic_stddev = 0;
};

// Every field of Summary; an empty input gives count 0 and NaN elsewhere.
Summary summarize(std::vector<double> values);

// The value at fraction p (0 .. 1) of the sorted values as Summary's quartiles are taken.
double quantile(std::vector<double> values, double p);
double median(std::vector<double> values);
double minimum(const std::vector<double>& values);

}  // namespace tca_harness
