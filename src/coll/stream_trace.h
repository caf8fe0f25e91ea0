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

#include "coll/collective.h"
#include "tca/tca.h"

namespace tca::coll {

// Enqueues an iteration of `coll`'s GPU program on `stream`, timed as above. Tracing must be
// on and `stream` not capturing; the iteration is enqueued even where the timing fails (the
// trace then lacks it).
tcaResult enqueue_traced(tcaColl_st& coll, cudaStream_t stream);

}  // namespace tca::coll
