// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernel times (--kernel-times, GPU): one outer iteration's kernels as they recorded their own
// start, end and waits for the peers (Engine::kernel_times), summed by kernel over the
// iteration; what no kernel of the engine covers shows as the gaps between them. The sums over
// the ranks and their output are in report.h.
#pragma once

#include <string>
#include <vector>

#include "engine.h"

namespace tca_cg {

struct KernelTotal {
  std::string name;
  long launches = 0;        // in one outer iteration
  double busy_us = 0;       // sum over the launches of end - start
  double peer_wait_us = 0;  // of which its blocks waited for the peers (the longest wait each)
  double gap_us = 0;        // sum of the time from the previous launch's end to this one's start
  // busy less the peers' waits: this rank's; after summarize_kernel_times (report.h) on the
  // rank where it is largest and where it is smallest (the ranks' imbalance of the work).
  double work_max_us = 0;
  double work_min_us = 0;
};

struct KernelTimesSummary {
  std::vector<KernelTotal> kernels;  // in the order of their first launch
  double span_us = 0;                // first start to last end, slowest rank
  long steps = 0;                    // CG steps the per-step figures divide by
};

// This rank's sums (the first launch's gap counts from its own start: 0).
KernelTimesSummary sum_kernel_times(const std::vector<KernelTime>& launches, long steps);

}  // namespace tca_cg
