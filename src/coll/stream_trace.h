// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Stream-ordered iterations of GPU collectives in the trace (TCA_TRACE). The host only enqueues
// them, so their times are taken on the GPU: each block of a traced iteration leaves its start
// (once the kernel before it has ended) and its end on the GPU's global timer in host-mapped
// memory, put on the host's steady clock through a reference read of that timer per GPU (anew
// each second). Nothing is added to the stream between iterations, so back-to-back iterations
// still overlap their launches (CUDA events between them would not). They are written as
// coll_begin / coll_end (call=stream, timed=gpu) once completed, looked for when 64 wait and at
// tcaFinalize; ones still running then are left out (and counted in the log). Iterations
// captured into a CUDA graph are not timed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "coll/collective.h"
#include "tca/tca.h"

namespace tca::coll {

// A GPU's global timer read at `gpu_ns`, taken to be the host's steady `host_ns`.
struct ClockReference {
  uint64_t gpu_ns = 0;
  uint64_t host_ns = 0;
};

// Whether each of `channels` blocks has left its (start, end) pair in `stamps` (both words
// nonzero); then the iteration's span on the host's clock, from its first block's start to its
// last block's end (never before the start).
bool stamped_span(const uint64_t* stamps, int channels, const ClockReference& reference,
                  uint64_t* begin, uint64_t* end);

// Enqueues an iteration of `coll`'s GPU program on `stream`, timed as above. Tracing must be
// on and `stream` not capturing; the iteration is enqueued even where the timing fails (the
// trace then lacks it).
tcaResult enqueue_traced(tcaColl_st& coll, cudaStream_t stream);

}  // namespace tca::coll
