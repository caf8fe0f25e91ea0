// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong --counters (counters.cc): runs with tca's counters off and on, and their
// comparison.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tca_harness/report.h"
#include "tca_harness/table.h"

namespace tca_pingpong {

// The counter settings of the runs --counters asks for, in order: "" (env: as the environment
// says), "off", "on", or both of them ("both").
std::vector<std::string> counter_runs(const std::string& option);
// Before tcaInit: TCA_COUNTERS=0 (and TCA_STATS unset) for "off", TCA_COUNTERS=1 for "on"; ""
// leaves the environment alone.
void set_counters(const std::string& run);

// Each row's latencies per counter setting; print() compares the medians of off and on.
class CounterComparison {
 public:
  void add(const std::string& row, const std::string& run, double latency_us);
  // '#' lines "ROW off X (N runs), on Y (N runs): +P%" and the report's "counters_comparison".
  void print(const tca_harness::Table& table, tca_harness::Report& report) const;

 private:
  std::vector<std::string> rows_;  // in the order first measured
  std::map<std::pair<std::string, std::string>, std::vector<double>> latencies_;
};

}  // namespace tca_pingpong
