// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernels of the GPU collective tests, behind plain launchers (the tests are host C++).
#pragma once

#include <cuda_runtime_api.h>
#include <tca/tca_coll_cuda.h>

#include <cstddef>
#include <cstdint>

namespace tca_test {

// A user kernel of `grid_blocks` blocks of `threads` threads that runs `iterations` iterations
// of the GPU collective `coll` (tcaDeviceCollRun in every block; blocks past the collective's
// own return at once). The first non-zero result lands in *error (device memory).
cudaError_t run_device_collective(tcaDeviceColl coll, int grid_blocks, int threads, int iterations,
                                  uint64_t* error, cudaStream_t stream);

// Writes `rank`'s contribution (coll/coll_values.h) to iteration *round into `sendbuf`; the
// round is read from device memory when the kernel runs, so that every replay of a captured
// graph writes the data of the round it is at.
cudaError_t fill_contribution(void* sendbuf, tcaDataType type, size_t count, int rank,
                              const uint64_t* round, cudaStream_t stream);

// Adds to *mismatches the elements of `recvbuf` that differ, byte for byte, from the result
// of iteration *round of `kind` over `ranks` ranks (count elements per rank).
cudaError_t count_result_mismatches(const void* recvbuf, tcaCollKind kind, tcaDataType type,
                                    tcaRedOp op, size_t count, int ranks, const uint64_t* round,
                                    unsigned long long* mismatches, cudaStream_t stream);

}  // namespace tca_test
