// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "cuda/cuda_util.h"
#include "cuda/timeline_cuda.h"

namespace bfs {

CudaTimeline::CudaTimeline(cudaStream_t stream) : stream_(stream) {}

CudaTimeline::~CudaTimeline() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

cudaEvent_t CudaTimeline::event(size_t index) {
  while (events_.size() <= index) {
    cudaEvent_t e;
    check_cuda(cudaEventCreate(&e), "cudaEventCreate");
    events_.push_back(e);
  }
  return events_[index];
}

void CudaTimeline::start() {
  phases_.clear();
  levels_.clear();
  added_.clear();
  check_cuda(cudaEventRecord(event(0), stream_), "cudaEventRecord");
}

void CudaTimeline::mark(Phase phase, int level) {
  phases_.push_back(phase);
  levels_.push_back(level);
  check_cuda(cudaEventRecord(event(phases_.size()), stream_), "cudaEventRecord");
}

void CudaTimeline::collect(PhaseSeconds& total, std::vector<PhaseSeconds>& levels) {
  std::vector<double> seconds;
  if (!phases_.empty())
    check_cuda(cudaEventSynchronize(event(phases_.size())), "cudaEventSynchronize");
  for (size_t i = 1; i <= phases_.size(); ++i) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, events_[0], events_[i]), "cudaEventElapsedTime");
    seconds.push_back(ms * 1e-3);
  }
  sum_segments(seconds, phases_, levels_, total, levels);
  add_into(total, levels);
}

}  // namespace bfs
