// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tca_harness {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// `sorted` is ascending and not empty.
double sorted_quantile(const std::vector<double>& sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  const double position = std::clamp((n + 1) * p, 1.0, n);  // 1-based
  const size_t lower = static_cast<size_t>(std::floor(position));
  const double fraction = position - static_cast<double>(lower);
  if (lower >= sorted.size()) return sorted.back();
  if (fraction == 0.5) return (sorted[lower - 1] + sorted[lower]) / 2;  // the exact midpoint
  return sorted[lower - 1] + fraction * (sorted[lower] - sorted[lower - 1]);
}

void add_harmonic(const std::vector<double>& values, Summary* summary) {
  const bool positive =
      std::all_of(values.begin(), values.end(), [](double value) { return value > 0; });
  if (!positive) {
    summary->harmonic_mean = summary->harmonic_stddev = kNaN;
    return;
  }
  const double n = static_cast<double>(values.size());
  double reciprocal_sum = 0;
  for (double value : values) reciprocal_sum += 1.0 / value;
  const double reciprocal_mean = reciprocal_sum / n;
  summary->harmonic_mean = n / reciprocal_sum;
  if (values.size() < 2) {
    summary->harmonic_stddev = 0;
    return;
  }
  double squares = 0;
  for (double value : values) squares += std::pow(1.0 / value - reciprocal_mean, 2);
  summary->harmonic_stddev =
      std::sqrt(squares) / (n - 1) * summary->harmonic_mean * summary->harmonic_mean;
}

}  // namespace

Summary summarize(std::vector<double> values) {
  Summary summary;
  summary.count = values.size();
  if (values.empty()) {
    summary.min = summary.first_quartile = summary.median = summary.third_quartile = kNaN;
    summary.max = summary.mean = summary.stddev = kNaN;
    summary.harmonic_mean = summary.harmonic_stddev = kNaN;
    return summary;
  }
  std::sort(values.begin(), values.end());
  summary.min = values.front();
  summary.first_quartile = sorted_quantile(values, 0.25);
  summary.median = sorted_quantile(values, 0.5);
  summary.third_quartile = sorted_quantile(values, 0.75);
  summary.max = values.back();
  const double n = static_cast<double>(values.size());
  summary.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double squares = 0;
  for (double value : values) squares += (value - summary.mean) * (value - summary.mean);
  summary.stddev = values.size() > 1 ? std::sqrt(squares / (n - 1)) : 0;
  add_harmonic(values, &summary);
  return summary;
}

double quantile(std::vector<double> values, double p) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  return sorted_quantile(values, p);
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

double minimum(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  return *std::min_element(values.begin(), values.end());
}

}  // namespace tca_harness
