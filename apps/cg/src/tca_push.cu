// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include <cuda_runtime.h>

#include <cuda/atomic>

#include "tca_push.cuh"
#include "tca_push.h"

namespace tca_cg {
namespace {

// Copies count doubles with every thread of the grid, 16 bytes at a time where both ends allow.
__device__ __forceinline__ void grid_copy(double* dst, const double* src, int64_t count) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const bool wide =
      ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15) == 0;
  int64_t done = 0;
  if (wide) {
    const int64_t pairs = count / 2;
    double2* to = reinterpret_cast<double2*>(dst);
    const double2* from = reinterpret_cast<const double2*>(src);
    int64_t i = first;
    // Two loads in flight per thread before their stores.
    for (; i + stride < pairs; i += 2 * stride) {
      const double2 a = __ldcs(from + i);
      const double2 b = __ldcs(from + i + stride);
      to[i] = a;
      to[i + stride] = b;
    }
    if (i < pairs) to[i] = __ldcs(from + i);
    done = 2 * pairs;
  }
  for (int64_t i = done + first; i < count; i += stride) dst[i] = src[i];
}

__global__ void __launch_bounds__(kPushThreads) push_kernel(PushPlan plan) {
  for (int k = 0; k < plan.puts; ++k) grid_copy(plan.dst[k], plan.src[k], plan.count[k]);
  const bool last = push_device::finish_push(plan.puts, plan.signal, plan.blocks_done, plan.pushes);
  // The last block holds the stream until every source has pushed as often; work after the
  // kernel then sees their data.
  if (last && plan.sources > 0)
    push_device::wait_arrivals(plan.sources, plan.arrived, *plan.pushes, plan.timeout_ns,
                               "an exchange of pieces");
}

__global__ void mailbox_allreduce_kernel(ReducePlan plan, const double* local, double* global,
                                         int count) {
  const double mine[2] = {local[0], count > 1 ? local[1] : 0.0};
  push_device::mailbox_allreduce_warp(plan, mine, global, count);
}

}  // namespace

void launch_push(const PushPlan& plan, cudaStream_t stream) {
  push_kernel<<<kPushBlocks, kPushThreads, 0, stream>>>(plan);
}

void launch_mailbox_allreduce(const ReducePlan& plan, const double* local, double* global,
                              int count, cudaStream_t stream) {
  mailbox_allreduce_kernel<<<1, 32, 0, stream>>>(plan, local, global, count);
}

}  // namespace tca_cg
