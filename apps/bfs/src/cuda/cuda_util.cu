// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include <algorithm>

#include "cuda/cuda_util.h"

namespace bfs {

int grid_for(size_t items, int threads_per_block) {
  static int multiprocessors = [] {
    int device = 0, count = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
    return std::max(1, count);
  }();
  const size_t needed = (items + threads_per_block - 1) / threads_per_block;
  return static_cast<int>(
      std::max<size_t>(1, std::min<size_t>(needed, size_t(multiprocessors) * 8)));
}

}  // namespace bfs
