// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "kernel_times.h"

#include <algorithm>

namespace tca_cg {

KernelTimesSummary sum_kernel_times(const std::vector<KernelTime>& launches, long steps) {
  KernelTimesSummary summary;
  summary.steps = steps;
  double previous_end = launches.empty() ? 0.0 : launches.front().begin_us;
  for (const KernelTime& launch : launches) {
    auto total = std::find_if(summary.kernels.begin(), summary.kernels.end(),
                              [&](const KernelTotal& k) { return k.name == launch.name; });
    if (total == summary.kernels.end())
      total = summary.kernels.insert(summary.kernels.end(), KernelTotal{launch.name});
    ++total->launches;
    total->busy_us += launch.end_us - launch.begin_us;
    total->peer_wait_us += launch.peer_wait_us;
    total->gap_us += launch.begin_us - previous_end;
    previous_end = launch.end_us;
    summary.span_us = std::max(summary.span_us, launch.end_us);
  }
  for (KernelTotal& k : summary.kernels) k.work_max_us = k.work_min_us = k.busy_us - k.peer_wait_us;
  return summary;
}

}  // namespace tca_cg
