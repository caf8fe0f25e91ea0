// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The Timeline of GPU ranks: a CUDA event per mark, recorded in the engine's stream, so work
// that is only enqueued is timed where it runs.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "timeline.h"

namespace bfs {

class CudaTimeline final : public Timeline {
 public:
  explicit CudaTimeline(cudaStream_t stream);
  ~CudaTimeline() override;
  CudaTimeline(const CudaTimeline&) = delete;
  CudaTimeline& operator=(const CudaTimeline&) = delete;

  void start() override;
  void mark(Phase phase, int level) override;
  void collect(PhaseSeconds& total, std::vector<PhaseSeconds>& levels) override;
  cudaEvent_t last_event() { return event(phases_.size()); }  // of the latest mark (or start)

 private:
  cudaEvent_t event(size_t index);  // made on first use, kept for later searches

  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;  // [0] the start, then one per mark
  std::vector<Phase> phases_;
  std::vector<int> levels_;
};

}  // namespace bfs
