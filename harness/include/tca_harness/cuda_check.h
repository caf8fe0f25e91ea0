// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// CUDA runtime errors in the harness's failure format (CUDA builds only).
#pragma once

#include <cuda_runtime_api.h>

namespace tca_harness {

// die("<call>: <CUDA's error string>") unless error is cudaSuccess.
void check(cudaError_t error, const char* call);

// The benchmark's own non-blocking stream on this rank's GPU, made at the first call (after
// tcaInit has chosen the device).
cudaStream_t bench_stream();

}  // namespace tca_harness
