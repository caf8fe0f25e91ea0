// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The launches of device_kernel.cu: a GPU collective's program, its resident server, and a read
// of the GPU's global timer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tca/detail/coll_program.h"

namespace tca::coll {

// Launches one iteration of `program`, a block of `threads` per channel.
cudaError_t launch_program(const tca_coll_program::Program& program, int threads,
                           cudaStream_t stream);
// Starts the resident kernel of host-called iterations of a one-channel `program`.
cudaError_t launch_server(const tca_coll_program::Program& program, int threads,
                          tca_coll_program::Doorbell* bell, uint64_t idle_ns, cudaStream_t stream);
// Enqueues a one-thread kernel that stores the GPU's global timer (ns) into `cell` (host-mapped).
cudaError_t launch_clock_read(uint64_t* cell, cudaStream_t stream);

}  // namespace tca::coll
