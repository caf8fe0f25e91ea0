// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The calibration table: every seed figure within 10%, and the table covers the figures the
// fabric descriptions were made from.
#include <gtest/gtest.h>

#include <set>

#include "calibrate.h"

namespace tca_sim {
namespace {

TEST(CalibrationTest, EverySeedFigureWithinTolerance) {
  const std::vector<CalibrationRow> rows = calibrate(TCA_SIM_FABRIC_DIR);
  ASSERT_GE(rows.size(), 30u);
  std::set<std::string> figures;
  for (const CalibrationRow& row : rows) {
    figures.insert(row.figure);
    EXPECT_TRUE(row.pass) << row.figure << ": seed " << row.seed << ", model " << row.model << " "
                          << row.unit << " (" << 100 * row.error << "%)";
    EXPECT_GT(row.model, 0) << row.figure;
  }
  for (const char* figure :
       {"PEACH2 PIO CPU->CPU 8 B latency", "PEACH3 GPU->GPU bandwidth, 512 KiB",
        "MVAPICH2-GDR GPU->GPU 8 B latency", "APEnet+ P2P ON/OFF threshold",
        "K40 across QPI latency",
        "allgather 128 KiB, 16 nodes: non-optimized / optimized node mapping"})
    EXPECT_EQ(figures.count(figure), 1u) << figure;
}

}  // namespace
}  // namespace tca_sim
