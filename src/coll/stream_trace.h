// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Stream-ordered iterations of GPU collectives in the trace (TCA_TRACE). The host only enqueues
// them, so their times are taken on the GPU: two CUDA events around each iteration, written as
// coll_begin / coll_end (call=stream, timed=gpu) once both have completed, on the host's steady
// clock through a reference event. Completed iterations are written at the next traced
// stream-ordered call and at tcaFinalize; ones still running then are left out (and counted in
// the log). Iterations captured into a CUDA graph are not timed (a graph holds one event time).
#pragma once

#include <cuda_runtime_api.h>

#include "coll/collective.h"
#include "tca/tca.h"

namespace tca::coll {

// Enqueues an iteration of `coll`'s GPU program on `stream`, timed as above. Tracing must be
// on and `stream` not capturing; the iteration is enqueued even where the timing fails (the
// trace then lacks it).
tcaResult enqueue_traced(tcaColl_st& coll, cudaStream_t stream);

}  // namespace tca::coll
