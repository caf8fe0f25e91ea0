// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include <cstdint>

#include "block_store.h"

namespace tca_tools {
namespace {

__global__ void block_store(uint4* __restrict__ dst, const uint4* __restrict__ src,
                            size_t words_per_block) {
  const size_t first = static_cast<size_t>(blockIdx.x) * words_per_block;
  for (size_t i = threadIdx.x; i < words_per_block; i += blockDim.x)
    dst[first + i] = src[first + i];
}

}  // namespace

cudaError_t launch_block_store(void* remote_dst, const void* local_src, size_t bytes, int blocks,
                               unsigned threads, cudaStream_t stream) {
  if (blocks < 1 || threads == 0 || bytes % (16 * static_cast<size_t>(blocks)) != 0)
    return cudaErrorInvalidValue;
  block_store<<<blocks, threads, 0, stream>>>(static_cast<uint4*>(remote_dst),
                                              static_cast<const uint4*>(local_src),
                                              bytes / 16 / static_cast<size_t>(blocks));
  return cudaGetLastError();
}

}  // namespace tca_tools
