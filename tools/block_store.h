// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// One block of a kernel storing into a peer GPU's memory, as a GPU collective's channel does
// (16-byte stores): the rate one block reaches (tca-topo; tca-sim's device_block_bandwidth).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tca_tools {

// `blocks` blocks of `threads` threads copy `bytes` (a multiple of 16) from `local_src` to
// `remote_dst` (a peer's memory, mapped), the blocks taking equal contiguous parts.
cudaError_t launch_block_store(void* remote_dst, const void* local_src, size_t bytes, int blocks,
                               unsigned threads, cudaStream_t stream);

}  // namespace tca_tools
