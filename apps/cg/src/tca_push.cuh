// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Device code of the push exchange shared by its own kernels (tca_push.cu) and the engine's
// kernels that sum over ranks themselves (gpu_kernels.cu, --tca-exchange fused).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cuda/atomic>

#include "tca_push.h"

namespace tca_cg {
namespace push_device {

__device__ __forceinline__ uint64_t global_time_ns() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// Counts polls and, every 1024, looks at the clock: a wait past the timeout traps (the run then
// fails with a CUDA error instead of hanging).
class Deadline {
 public:
  __device__ explicit Deadline(uint64_t timeout_ns) : timeout_ns_(timeout_ns) {}
  __device__ __forceinline__ void check(const char* what) {
    if (++polls_ % 1024 != 0 || timeout_ns_ == 0) return;
    const uint64_t now = global_time_ns();
    if (deadline_ == 0) deadline_ = now + timeout_ns_;
    if (now > deadline_) {
      printf("tca-cg: %s waited past its timeout (block %d, thread %d)\n", what, blockIdx.x,
             threadIdx.x);
      __trap();
    }
  }

 private:
  uint64_t timeout_ns_;
  uint64_t deadline_ = 0;
  unsigned polls_ = 0;
};

__device__ __forceinline__ void store_cell(uint64_t* cell, uint64_t value) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(cell), "l"(value) : "memory");
}

__device__ __forceinline__ uint64_t load_cell(const uint64_t* cell) {
  uint64_t value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(cell) : "memory");
  return value;
}

using SystemAtomic = cuda::atomic_ref<uint64_t, cuda::thread_scope_system>;

// Called by every thread after its block's stores into the peers: the grid's last block (its
// threads get true) raises each of the `puts` cells once and counts the push in *pushes.
__device__ __forceinline__ bool finish_push(int puts, uint64_t* const* signal,
                                            unsigned* blocks_done, uint64_t* pushes) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    // The block's stores (ordered before this thread's by the barrier), then its arrival. A
    // device-scope release suffices: the last block acquires every arrival, and its
    // system-scope fence below orders all the stores it has seen before the raises (a
    // system-scope fence in every block made each pushing kernel 1.1-1.5 us slower on 4 H200s;
    // with every block also raising the cells by its share right after its fence, so that no
    // receiver waits for the last block, single-reduction's update at class C on 2 H200s took
    // 8.4 us a step against 6.6, and the step 73.8 against 71.5).
    cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
    last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return false;
  if (threadIdx.x == 0) {
    // Every block's stores (they arrived before us), then the raises.
    cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_system);
    for (int k = 0; k < puts; ++k)
      SystemAtomic(*signal[k]).fetch_add(1, cuda::memory_order_relaxed);
    *blocks_done = 0;
    *pushes += 1;
  }
  __syncthreads();
  return true;
}

// Called by every thread of a block: returns once each of the `sources` cells has reached
// `expected` (acquire: their pushes' data is then visible to the block).
// `what` names the exchange in the message of a wait past the timeout.
__device__ __forceinline__ void wait_arrivals(int sources, const uint64_t* const* arrived,
                                              uint64_t expected, uint64_t timeout_ns,
                                              const char* what) {
  if (static_cast<int>(threadIdx.x) < sources) {
    SystemAtomic cell(*const_cast<uint64_t*>(arrived[threadIdx.x]));
    Deadline deadline(timeout_ns);
    while (cell.load(cuda::memory_order_relaxed) < expected) deadline.check(what);
    (void)cell.load(cuda::memory_order_acquire);
  }
  __syncthreads();
}

// The wait of a kernel that reads pushed data (every thread of the block).
__device__ __forceinline__ void wait_for(const PushWait& wait, const char* what) {
  if (wait.sources > 0)
    wait_arrivals(wait.sources, wait.arrived, *wait.pushes, wait.timeout_ns, what);
}
__device__ __forceinline__ void wait_for_p(const PushWait& wait) {
  wait_for(wait, "the exchange of p");
}

// A double as two tagged cells: each holds `tag` (a message's number in its high 32 bits) beside
// 32 bits of the value, so a reader that sees the number in both sees the value whole, with no
// fence between data and a flag.
__device__ __forceinline__ void store_tagged(uint64_t* cells, uint64_t tag, double value) {
  const uint64_t bits = static_cast<uint64_t>(__double_as_longlong(value));
  store_cell(cells, tag | (bits & 0xffffffffu));
  store_cell(cells + 1, tag | (bits >> 32));
}

// Waits until both of `cells` carry the number `flag`; returns the double they hold.
__device__ __forceinline__ double wait_tagged(const uint64_t* cells, uint32_t flag,
                                              Deadline& deadline, const char* what) {
  uint64_t low = load_cell(cells), high = load_cell(cells + 1);
  while (static_cast<uint32_t>(low >> 32) != flag || static_cast<uint32_t>(high >> 32) != flag) {
    deadline.check(what);
    if (static_cast<uint32_t>(low >> 32) != flag) low = load_cell(cells);
    if (static_cast<uint32_t>(high >> 32) != flag) high = load_cell(cells + 1);
  }
  return __longlong_as_double(static_cast<long long>((low & 0xffffffffu) | (high << 32)));
}

// Called by the 32 lanes of one warp, lane r holding rank r's two values: their sums over the
// `ranks` ranks, added in rank order (the same bits on every rank), in every lane.
__device__ __forceinline__ void sum_in_rank_order(const double (&value)[2], int ranks,
                                                  double (&sum)[2]) {
  sum[0] = sum[1] = 0.0;
  for (int r = 0; r < ranks; ++r) {
    for (int c = 0; c < 2; ++c) sum[c] += __shfl_sync(0xffffffffu, value[c], r);
  }
}

// Called by the 32 lanes of one warp: lane r puts this rank's `count` (1 or 2) values into rank
// r's mailbox, then waits for rank r's values in its own; lane 0 adds them in rank order into
// global[0..count) and counts the allreduce. Every store carries the allreduce's sequence
// number beside 4 bytes of data, so no fence orders data before a flag; the two parities of the
// mailbox keep a message from overwriting one its receiver has not read (sending allreduce k+2
// needs the peer's k+1, which it sends after reading k).
__device__ __forceinline__ void mailbox_allreduce_warp(const ReducePlan& plan, const double* mine,
                                                       double* global, int count) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const uint64_t sequence = *plan.sequence + 1;
  const uint32_t flag = static_cast<uint32_t>(sequence);  // never 0 before 2^32 allreduces
  const uint64_t tag = static_cast<uint64_t>(flag) << 32;
  const int parity = static_cast<int>(sequence & 1);
  double value[2] = {0.0, 0.0};
  if (lane < plan.ranks) {
    if (lane == plan.rank) {
      for (int c = 0; c < count; ++c) value[c] = mine[c];
    } else {
      uint64_t* cells =
          plan.mailbox[lane] + (static_cast<int64_t>(parity) * plan.ranks + plan.rank) * 4;
      for (int c = 0; c < count; ++c) store_tagged(cells + 2 * c, tag, mine[c]);
      const uint64_t* own =
          plan.mailbox[plan.rank] + (static_cast<int64_t>(parity) * plan.ranks + lane) * 4;
      Deadline deadline(plan.timeout_ns);
      for (int c = 0; c < count; ++c)
        value[c] = wait_tagged(own + 2 * c, flag, deadline, "an allreduce");
    }
  }
  double sum[2];
  sum_in_rank_order(value, plan.ranks, sum);
  if (lane == 0) {
    for (int c = 0; c < count; ++c) global[c] = sum[c];
    *plan.sequence = sequence;
  }
  __syncwarp();
}

// Called by the 32 lanes of one warp: lane r stores this rank's two values `mine` into rank
// r's pair mailbox (this rank's own too), tagged with the next post's number, which lane 0
// then counts. No fence: each cell carries its tag.
__device__ __forceinline__ void post_pair(const ReducePlan& plan, const double* mine) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const uint64_t sequence = *plan.sequence + 1;
  const uint64_t tag = static_cast<uint64_t>(static_cast<uint32_t>(sequence)) << 32;
  const int parity = static_cast<int>(sequence & 1);
  if (lane < plan.ranks) {
    uint64_t* cells =
        plan.mailbox[lane] + (static_cast<int64_t>(parity) * plan.ranks + plan.rank) * 4;
    for (int c = 0; c < 2; ++c) store_tagged(cells + 2 * c, tag, mine[c]);
  }
  __syncwarp();
  if (lane == 0) *plan.sequence = sequence;
  __syncwarp();
}

// Called by the 32 lanes of one warp: waits for every rank's values of the last post (this
// rank's count of posts) and returns their sums, added in rank order, in every lane.
__device__ __forceinline__ void collect_pair(const ReducePlan& plan, double (&sum)[2]) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const uint64_t sequence = *plan.sequence;
  const uint32_t flag = static_cast<uint32_t>(sequence);
  const int parity = static_cast<int>(sequence & 1);
  double value[2] = {0.0, 0.0};
  if (lane < plan.ranks) {
    const uint64_t* own =
        plan.mailbox[plan.rank] + (static_cast<int64_t>(parity) * plan.ranks + lane) * 4;
    Deadline deadline(plan.timeout_ns);
    for (int c = 0; c < 2; ++c)
      value[c] = wait_tagged(own + 2 * c, flag, deadline, "the pipelined pair's sum");
  }
  sum_in_rank_order(value, plan.ranks, sum);
}

}  // namespace push_device
}  // namespace tca_cg
