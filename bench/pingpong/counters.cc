// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong --counters: what tca's counters (TCA_COUNTERS, docs/OPERATING.md) cost. Each run of
// the selected paths starts tca with the counters off or on; with "both" the runs alternate in
// one process, and the end compares each row's median latency off and on.
#include "counters.h"

#include <algorithm>
#include <cstdlib>

#include "tca_harness/stats.h"

namespace tca_pingpong {

std::vector<std::string> counter_runs(const std::string& option) {
  if (option == "both") return {"off", "on"};
  if (option == "off" || option == "on") return {option};
  return {""};  // "env"
}

void set_counters(const std::string& run) {
  if (run.empty()) return;  // as the environment says
  setenv("TCA_COUNTERS", run == "on" ? "1" : "0", 1);
  if (run == "off") unsetenv("TCA_STATS");  // which would count all the same
}

void CounterComparison::add(const std::string& row, const std::string& run, double latency_us) {
  if (std::find(rows_.begin(), rows_.end(), row) == rows_.end()) rows_.push_back(row);
  latencies_[{row, run}].push_back(latency_us);
}

void CounterComparison::print(const tca_harness::Table& table, tca_harness::Report& report) const {
  using tca_harness::format;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  table.comment("counters off against on: the median latency (us) of each row's runs");
  for (const std::string& row : rows_) {
    const auto off = latencies_.find({row, "off"});
    const auto on = latencies_.find({row, "on"});
    if (off == latencies_.end() || on == latencies_.end()) continue;
    const double off_us = tca_harness::median(off->second);
    const double on_us = tca_harness::median(on->second);
    const double cost = off_us > 0 ? (on_us / off_us - 1) * 100 : 0;
    table.comment(format("%-40s off %.3f (%zu runs), on %.3f (%zu runs): %+.1f%%", row.c_str(),
                         off_us, off->second.size(), on_us, on->second.size(), cost));
    rows.push_back({{"row", row},
                    {"off_us", off_us},
                    {"on_us", on_us},
                    {"runs", off->second.size()},
                    {"cost_percent", cost}});
  }
  report.set("counters_comparison", rows);
}

}  // namespace tca_pingpong
