// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The symmetric-storage SpMV: y = U x + U^T x - D x from the upper triangle U (CSR). A warp
// takes a row i: it sums a(i, j) x(j) over the row (the gathers of U x) and adds a(i, j) x(i)
// into y(j) for j > i by double atomics (the scatter of U^T x), then adds its row sum into
// y(i). y is zeroed first; the order of the atomic additions varies, so the last bits of y do.
#include <cuda_runtime.h>

#include "gpu_kernels.cuh"

namespace tca_cg {
namespace {

__device__ double warp_total(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}

__global__ void __launch_bounds__(kSpmvThreads) spmv_symmetric_kernel(SpmvArgs a) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kSpmvThreads / 32);
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (kSpmvThreads / 32) + threadIdx.x / 32;
       row < a.rows; row += warps) {
    const double x_row = __ldg(a.x + row);
    const int64_t end = a.row_ptr[row + 1];
    double s = 0.0;
    for (int64_t k = a.row_ptr[row] + lane; k < end; k += 32) {
      const int32_t c = __ldcs(a.col + k);
      const double v = __ldcs(a.val + k);
      s += v * __ldg(a.x + c);
      if (c != row) atomicAdd(a.y + c, v * x_row);
    }
    s = warp_total(s);
    if (lane == 0) atomicAdd(a.y + row, s);
  }
}

}  // namespace

void launch_spmv_symmetric(const SpmvArgs& args, int blocks, cudaStream_t stream) {
  cudaMemsetAsync(args.y, 0, static_cast<size_t>(args.rows) * sizeof(double), stream);
  spmv_symmetric_kernel<<<blocks, kSpmvThreads, 0, stream>>>(args);
}

int spmv_symmetric_blocks_per_multiprocessor() {
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spmv_symmetric_kernel, kSpmvThreads, 0);
  return blocks < 1 ? 1 : blocks;
}

}  // namespace tca_cg
