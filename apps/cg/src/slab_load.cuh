// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#pragma once

// A slab of x into a block's shared memory. On compute capability 9.0 and up the bulk copy unit
// moves it (cp.async.bulk, completed on an mbarrier after the slab in shared memory): the
// threads issue a few instructions instead of a load and a store per element, and the whole
// slab is in flight at once. Elsewhere, or where x is not 16-byte aligned, the threads copy it.

#include <cuda_runtime.h>

#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cuda/ptx>
#endif

namespace tca_cg {

// Bytes of shared memory a slab kernel needs for `width` doubles of x and its barrier.
inline constexpr size_t slab_shared_bytes(int width) {
  return static_cast<size_t>(width) * sizeof(double) + sizeof(uint64_t);
}

// The barrier of a block's slab loads: the word after the slab's `width` doubles.
__device__ __forceinline__ uint64_t* slab_barrier(double* xs, int width) {
  return reinterpret_cast<uint64_t*>(xs + width);
}

// Called by every thread before the first load_slab (a barrier must follow before it).
__device__ __forceinline__ void init_slab_barrier(uint64_t* barrier) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0) {
    cuda::ptx::mbarrier_init(barrier, 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
#else
  (void)barrier;
#endif
}

// Called by every thread of the block, after a barrier that ends every read of xs: xs[0, width)
// = x[0, width), visible to every thread on return. `phase` is the barrier's parity, flipped
// by each bulk load.
__device__ __forceinline__ void load_slab(double* xs, const double* x, int width, uint64_t* barrier,
                                          uint32_t& phase) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if ((reinterpret_cast<uintptr_t>(x) & 15u) == 0) {
    const int bulk = width & ~1;  // whole 16-byte units; an odd last element goes by hand
    if (threadIdx.x < 32 && bulk > 0) {
      const int lane = static_cast<int>(threadIdx.x);
      if (lane == 0)
        (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                                   cuda::ptx::space_shared, barrier,
                                                   static_cast<uint32_t>(bulk) * sizeof(double));
      __syncwarp();
      // The peers' pieces were acquired by generic loads; the shared memory was last read by
      // generic loads: both ordered before the copy engine's accesses.
      cuda::ptx::fence_proxy_async();
      const int piece = ((bulk + 31) / 32 + 1) & ~1;  // doubles per lane, even
      const int begin = min(bulk, lane * piece), end = min(bulk, begin + piece);
      if (end > begin)
        cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, xs + begin,
                                 x + begin, static_cast<uint32_t>(end - begin) * sizeof(double),
                                 barrier);
    }
    if (bulk < width && threadIdx.x == blockDim.x - 1) xs[width - 1] = x[width - 1];
    if (bulk > 0) {
      while (!cuda::ptx::mbarrier_try_wait_parity(barrier, phase)) {
      }
      phase ^= 1u;
    }
    __syncthreads();  // the odd last element
    return;
  }
#else
  (void)barrier;
  (void)phase;
#endif
  for (int i = threadIdx.x; i < width; i += blockDim.x) xs[i] = x[i];
  __syncthreads();
}

}  // namespace tca_cg
