/*
 * tca collectives from inside a kernel: one iteration of a GPU collective (tcaCollNew with
 * config.memory = TCA_MEM_GPU) run by the calling grid, with no host in the loop. Usable from
 * a persistent kernel and inside CUDA graphs.
 *
 *   tcaDeviceColl coll; int blocks, min_threads;
 *   tcaCollDeviceHandle(c, &coll, &blocks, &min_threads);      // host, once
 *   my_kernel<<<blocks, 512>>>(coll, ...);
 *   __global__ void my_kernel(tcaDeviceColl coll, ...) {
 *     ... produce sendbuf ...;  __syncthreads() / grid-wide ordering as the application needs
 *     if (tcaDeviceCollRun(coll) != 0) return;   // every thread of blocks 0 .. blocks-1
 *     ... recvbuf holds the result for this block's part; other blocks' parts are complete
 *         once those blocks have returned from the call ...
 *   }
 *
 * The call uses 8 KiB of static shared memory (the channel's instructions) in the calling kernel.
 * Block b (blockIdx.x) runs channel b: a fixed share of every rank's data, with its own signals,
 * so blocks never wait for each other. Blocks with blockIdx.x >= blocks return at once. Every
 * thread of a block must make the call (it synchronizes the block). Returns 0, or the
 * tcaResult that ended the iteration early (TCA_ERROR_TIMEOUT: a peer did not arrive within
 * tca's timeout); after a failure the object only fails (see tca/tca_coll_cuda.h).
 */
#ifndef TCA_TCA_COLL_DEVICE_CUH
#define TCA_TCA_COLL_DEVICE_CUH

#include "tca/detail/coll_program.h"
#include "tca/tca_coll_cuda.h"
#include "tca/tca_device.cuh"

namespace tca_coll_device_detail {

using namespace tca_coll_program;

// Shared memory that holds a running channel's instructions (static, in every calling kernel).
constexpr size_t kProgramCacheBytes = 8192;
static_assert(sizeof(Instruction) % sizeof(uint64_t) == 0 &&
                  sizeof(Segment) % sizeof(uint64_t) == 0,
              "the cache copies whole words");

template <typename T>
__device__ __forceinline__ T combine(uint32_t op, T a, T b) {
  switch (op) {
    case kMax:
      return a > b ? a : b;
    case kMin:
      return a < b ? a : b;
    default:
      return a + b;
  }
}

template <typename T>
__device__ __forceinline__ void reduce_typed(uint32_t op, void* dst, const void* a, const void* b,
                                             uint64_t count, unsigned lane, unsigned lanes) {
  T* out = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  // Several elements in flight per thread, as in the copies.
  constexpr unsigned kUnroll = 4;
  uint64_t i = lane;
  for (; i + (kUnroll - 1) * static_cast<uint64_t>(lanes) < count; i += kUnroll * lanes) {
    T xs[kUnroll], ys[kUnroll];
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) {
      xs[k] = x[i + k * lanes];
      ys[k] = y[i + k * lanes];
    }
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) out[i + k * lanes] = combine(op, xs[k], ys[k]);
  }
  for (; i < count; i += lanes) out[i] = combine(op, x[i], y[i]);
}

__device__ __forceinline__ void reduce(uint32_t type, uint32_t op, void* dst, const void* a,
                                       const void* b, uint64_t count, unsigned lane,
                                       unsigned lanes) {
  switch (type) {
    case kInt32:
      reduce_typed<int32_t>(op, dst, a, b, count, lane, lanes);
      break;
    case kInt64:
      reduce_typed<int64_t>(op, dst, a, b, count, lane, lanes);
      break;
    case kFloat:
      reduce_typed<float>(op, dst, a, b, count, lane, lanes);
      break;
    default:
      reduce_typed<double>(op, dst, a, b, count, lane, lanes);
      break;
  }
}

// Polls a signal cell until it reaches `target` (relaxed polls, then one acquire load: the data
// behind it is visible afterwards). False when patience ran out first.
__device__ __forceinline__ bool await_signal(const uint64_t* cell, uint64_t target,
                                             tca_device_detail::Patience& patience) {
  while (tca_device_detail::load_cell(cell) < target)
    if (!patience.another_poll()) return false;
  tca_device_detail::SystemAtomic seen(*const_cast<uint64_t*>(cell));
  return seen.load(cuda::memory_order_acquire) >= target;
}

// One iteration of `program`'s channel blockIdx.x (see tcaDeviceCollRun).
__device__ __forceinline__ int run(const Program& program) {
  const unsigned channel = blockIdx.x;
  if (channel >= program.channels) return 0;
  const unsigned lane = tca_device_detail::lane_in_block();
  const unsigned lanes = blockDim.x * blockDim.y * blockDim.z;
  __shared__ uint64_t iteration;
  __shared__ int failure;
  __shared__ Channel mine;
  // The channel's instructions and segments for this iteration, copied in one parallel sweep
  // when they fit: executing them from global memory would cost a dependent load per step.
  __shared__ alignas(16) uint64_t cache[kProgramCacheBytes / sizeof(uint64_t)];
  if (lane == 0) {
    iteration = program.iterations[channel];
    failure = *const_cast<volatile int*>(program.failure);  // an earlier failure: do nothing
    mine = program.channel[channel];
  }
  __syncthreads();
  if (failure != 0) {
    const int earlier = failure;
    __syncthreads();  // every thread has read `failure` before a next call may rewrite it
    return earlier;
  }
  const uint64_t it = iteration;
  const unsigned parity = static_cast<unsigned>(it & 1);
  const uint64_t target = it + 1;                                       // signal cells
  const uint32_t flag = static_cast<uint32_t>(it % 0xFFFFFFFFull) + 1;  // inline: never 0
  const uint32_t count = mine.instructions[parity];
  const uint32_t first_segment = mine.first_segment[parity];
  const Instruction* instructions = program.instruction + mine.first_instruction[parity];
  const Segment* segment_table = program.segment + first_segment;
  const size_t instruction_words = count * sizeof(Instruction) / sizeof(uint64_t);
  const size_t words =
      instruction_words + mine.segments[parity] * sizeof(Segment) / sizeof(uint64_t);
  if (words * sizeof(uint64_t) <= kProgramCacheBytes) {
    const uint64_t* from_instructions = reinterpret_cast<const uint64_t*>(instructions);
    const uint64_t* from_segments = reinterpret_cast<const uint64_t*>(segment_table);
    for (size_t w = lane; w < words; w += lanes)
      cache[w] =
          w < instruction_words ? from_instructions[w] : from_segments[w - instruction_words];
    __syncthreads();
    instructions = reinterpret_cast<const Instruction*>(cache);
    segment_table = reinterpret_cast<const Segment*>(cache + instruction_words);
  }
  for (uint32_t n = 0; n < count; ++n) {
    const Instruction& instruction = instructions[n];
    const Segment* segments = segment_table + (instruction.first_segment - first_segment);
    tca_device_detail::Patience patience(program.timeout_ns);
    switch (instruction.kind) {
      case kSend:
        for (uint32_t s = 0; s < instruction.segments; ++s)
          tca_device_detail::copy(segments[s].dst, segments[s].src, segments[s].bytes, lane, lanes,
                                  segments[s].local_copy);
        __syncthreads();  // every thread's stores, then the signal's release covers them
        if (lane == 0) tcaDeviceSignalOp(instruction.signal, target, TCA_SIGNAL_SET);
        break;
      case kInlineSend: {
        uint64_t offset = 0;  // in the message; every segment but the last is whole words
        for (uint32_t s = 0; s < instruction.segments; ++s) {
          tca_device_detail::inline_put(instruction.cells + offset / 4, segments[s].src,
                                        segments[s].bytes, flag, lane, lanes);
          offset += segments[s].bytes;
        }
        break;
      }
      case kAwait:
      case kAwaitCredit:
        if (lane == 0 && !await_signal(instruction.signal, target, patience))
          failure = TCA_ERROR_TIMEOUT;
        break;
      case kInlineAwait: {
        uint64_t offset = 0;
        for (uint32_t s = 0; s < instruction.segments; ++s) {
          if (!tca_device_detail::inline_wait(instruction.cells + offset / 4, segments[s].dst,
                                              segments[s].bytes, flag, lane, lanes, patience))
            failure = TCA_ERROR_TIMEOUT;  // racing writers all write the same value
          offset += segments[s].bytes;
        }
        break;
      }
      case kPostCredit:
        if (lane == 0) tcaDeviceSignalOp(instruction.signal, target, TCA_SIGNAL_SET);
        break;
      case kReduce:
        reduce(program.type, program.op, instruction.dst, instruction.a, instruction.b,
               instruction.count, lane, lanes);
        break;
      case kCopy:
        for (uint32_t s = 0; s < instruction.segments; ++s)
          tca_device_detail::copy(segments[s].dst, segments[s].src, segments[s].bytes, lane, lanes);
        break;
    }
    __syncthreads();
    if (failure != 0) break;
  }
  const int result = failure;
  if (lane == 0) {
    if (result == 0) {
      program.iterations[channel] = it + 1;
    } else {  // channels that fail together write the same code
      *const_cast<volatile int*>(program.failure) = result;
      *const_cast<volatile int*>(program.error) = result;  // host memory
      tcaDeviceFence();
    }
  }
  __syncthreads();  // every thread has read the shared state before a next call rewrites it
  return result;
}

}  // namespace tca_coll_device_detail

__device__ __forceinline__ int tcaDeviceCollRun(tcaDeviceColl coll) {
  return tca_coll_device_detail::run(*reinterpret_cast<const tca_coll_program::Program*>(coll));
}

#endif /* TCA_TCA_COLL_DEVICE_CUH */
