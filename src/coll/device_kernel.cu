// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The kernel of GPU collectives: every block runs its channel of the program.
#include "coll/device_kernel.h"
#include "tca/tca_coll_device.cuh"

namespace tca::coll {
namespace {

constexpr int kMaxThreads = 1024;

// The program travels as a kernel parameter: its fields are then read from the constant bank
// instead of one more dependent load from global memory at every launch.
//
// Launched with programmatic stream serialization: the next kernel of the stream may be
// scheduled as soon as every block of this one has started (launch_dependents), and this one
// may be scheduled before the previous kernel ends; griddepcontrol.wait holds it until the
// previous kernel has completed and its memory is visible. Back-to-back iterations (CUDA graph
// replays) then overlap a launch, the iteration's number and the loading of the (unchanging)
// program with the previous iteration instead of paying them after.
//
// A traced iteration (program.stamps) leaves each block's start (once the previous kernel has
// ended) and end on the global timer in one 16-byte store, with no fence: the host takes the
// pair once both words are nonzero (the timer never reads 0).
__global__ void __launch_bounds__(kMaxThreads)
    run_program(const tca_coll_program::Program program) {
  __shared__ tca_coll_device_detail::ProgramCache cache;
  tca_coll_device_detail::begin(program, cache);  // numbered before a successor can be
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  tca_coll_device_detail::prefetch(program, cache);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const uint64_t started = program.stamps != nullptr ? tca_device_detail::global_time_ns() : 0;
  tca_coll_device_detail::run(program, cache);          // a failure is recorded in the program
  if (program.stamps != nullptr && threadIdx.x == 0) {  // run ends with the block's barrier
    uint64_t* stamp = program.stamps + 2 * blockIdx.x;
    asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(stamp), "l"(started),
                 "l"(tca_device_detail::global_time_ns())
                 : "memory");
  }
}

__global__ void read_clock(uint64_t* cell) {
  tca_device_detail::store_cell(cell, tca_device_detail::global_time_ns());
}

// Thread 0 of the resident kernel: true once an iteration beyond `served` is asked for;
// false to leave (told to, or idle for idle_ns without a ring it could have missed).
__device__ bool await_ring(tca_coll_program::Doorbell* bell, uint64_t served, uint64_t idle_ns) {
  using tca_device_detail::load_cell;
  uint64_t idle_since = 0;
  for (unsigned polls = 1;; ++polls) {
    const uint64_t requested = load_cell(&bell->requested);
    if (requested == tca_coll_program::kStopServing) return false;
    if (requested > served) return true;
    if (polls % 16 != 0) continue;  // a poll of host memory takes about a microsecond
    const uint64_t now = tca_device_detail::global_time_ns();
    if (idle_since == 0) idle_since = now;
    if (now - idle_since < idle_ns) continue;
    cuda::atomic_ref<uint32_t, cuda::thread_scope_system> leaving(bell->leaving);
    leaving.store(1, cuda::memory_order_relaxed);
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
    const uint64_t last_look = load_cell(&bell->requested);
    if (last_look == tca_coll_program::kStopServing || last_look <= served) return false;
    leaving.store(0, cuda::memory_order_relaxed);  // the host saw no leaving, or waits for this
    return true;
  }
}

// Host-called iterations without a launch each: one block (a one-channel program) that runs an
// iteration per ring of the doorbell and publishes its completion, until it leaves.
__global__ void __launch_bounds__(kMaxThreads)
    serve_doorbell(const tca_coll_program::Program program, tca_coll_program::Doorbell* bell,
                   uint64_t idle_ns) {
  __shared__ tca_coll_device_detail::ProgramCache cache;
  __shared__ bool serve;
  uint64_t served = bell->completed;  // thread 0's count
  for (;;) {
    if (threadIdx.x == 0) serve = await_ring(bell, served, idle_ns);
    __syncthreads();
    if (!serve) return;
    tca_coll_device_detail::begin(program, cache);
    tca_coll_device_detail::prefetch(program, cache);
    const int result = tca_coll_device_detail::run(program, cache);  // ends with a barrier
    if (threadIdx.x == 0) {
      // After a failure (recorded in the program) nothing more can be served: leave with it.
      if (result != 0) bell->leaving = 1;
      cuda::atomic_ref<uint64_t, cuda::thread_scope_system> completed(bell->completed);
      completed.store(++served, cuda::memory_order_release);  // every thread's results first
    }
    if (result != 0) return;
  }
}

}  // namespace

cudaError_t launch_server(const tca_coll_program::Program& program, int threads,
                          tca_coll_program::Doorbell* bell, uint64_t idle_ns, cudaStream_t stream) {
  serve_doorbell<<<1, threads, 0, stream>>>(program, bell, idle_ns);
  return cudaGetLastError();
}

cudaError_t launch_clock_read(uint64_t* cell, cudaStream_t stream) {
  read_clock<<<1, 1, 0, stream>>>(cell);
  return cudaGetLastError();
}

cudaError_t launch_program(const tca_coll_program::Program& program, int threads,
                           cudaStream_t stream) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(program.channels);
  config.blockDim = dim3(threads);
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, run_program, program);
}

}  // namespace tca::coll
