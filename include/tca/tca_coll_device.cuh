// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
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
#include "tca/detail/reduce_ops.h"
#include "tca/tca_coll_cuda.h"
#include "tca/tca_device.cuh"

namespace tca_coll_device_detail {

using namespace tca_coll_program;

// Shared memory that holds a running channel's instructions (static, in every calling kernel).
constexpr size_t kProgramCacheBytes = 8192;
static_assert(sizeof(Instruction) % sizeof(uint64_t) == 0 &&
                  sizeof(Segment) % sizeof(uint64_t) == 0,
              "the cache copies whole words");

using tca_reduce::combine;

// Polls a signal cell until it reaches `target` (relaxed polls, then one acquire load: the data
// behind it is visible afterwards). False when patience ran out first.
__device__ __forceinline__ bool await_signal(const uint64_t* cell, uint64_t target,
                                             tca_device_detail::Patience& patience) {
  while (tca_device_detail::load_cell(cell) < target)
    if (!patience.another_poll()) return false;
  tca_device_detail::SystemAtomic seen(*const_cast<uint64_t*>(cell));
  return seen.load(cuda::memory_order_acquire) >= target;
}

// The channel's instructions and segments in shared memory: executing them from global memory
// would cost a dependent load per step. Both parities' lists are copied when they fit together,
// which needs nothing of the previous iteration, so a kernel may load them before it waits for
// its predecessor (device_kernel.cu); else the running parity's after.
struct ProgramCache {
  Channel mine;
  bool both_cached;  // parity 0's words, then parity 1's, are in `words`
  uint64_t iteration;
  int failure;
  alignas(16) uint64_t words[kProgramCacheBytes / sizeof(uint64_t)];
};

__device__ __forceinline__ size_t parity_words(const Channel& mine, unsigned parity) {
  return (mine.instructions[parity] * sizeof(Instruction) +
          mine.segments[parity] * sizeof(Segment)) /
         sizeof(uint64_t);
}

// Copies parity `parity`'s instructions, then its segments, to cache.words from `at` on.
__device__ __forceinline__ void cache_parity(const Program& program, ProgramCache& cache,
                                             unsigned parity, size_t at, unsigned lane,
                                             unsigned lanes) {
  const Channel& mine = cache.mine;
  const size_t instruction_words =
      mine.instructions[parity] * sizeof(Instruction) / sizeof(uint64_t);
  const uint64_t* from_instructions =
      reinterpret_cast<const uint64_t*>(program.instruction + mine.first_instruction[parity]);
  const uint64_t* from_segments =
      reinterpret_cast<const uint64_t*>(program.segment + mine.first_segment[parity]);
  const size_t words = parity_words(mine, parity);
  for (size_t w = lane; w < words; w += lanes)
    cache.words[at + w] =
        w < instruction_words ? from_instructions[w] : from_segments[w - instruction_words];
}

// Numbers this call of the channel (every form takes a number, so forms mix). A kernel that
// lets its successor launch early (device_kernel.cu) calls it before allowing that, so numbers
// follow the launch order without waiting for the predecessor to end. Every thread calls it.
__device__ __forceinline__ void begin(const Program& program, ProgramCache& cache) {
  const unsigned channel = blockIdx.x;
  if (channel >= program.channels) return;
  if (tca_device_detail::lane_in_block() == 0) {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_device> started(program.started[channel]);
    cache.iteration = started.fetch_add(1, cuda::memory_order_relaxed);
  }
  __syncthreads();
}

// The part of an iteration that depends only on the program: the channel's table entry, and
// both parities' lists when they fit. Every thread of the block calls it.
__device__ __forceinline__ void prefetch(const Program& program, ProgramCache& cache) {
  const unsigned channel = blockIdx.x;
  if (channel >= program.channels) return;
  const unsigned lane = tca_device_detail::lane_in_block();
  const unsigned lanes = blockDim.x * blockDim.y * blockDim.z;
  if (lane == 0) cache.mine = program.channel[channel];
  __syncthreads();
  const size_t first = parity_words(cache.mine, 0);
  const size_t both = first + parity_words(cache.mine, 1);
  const bool fit = both * sizeof(uint64_t) <= kProgramCacheBytes;
  if (fit) {
    cache_parity(program, cache, 0, 0, lane, lanes);
    cache_parity(program, cache, 1, first, lane, lanes);
  }
  if (lane == 0) {
    // An earlier failure: this iteration does nothing. Read before the predecessor has ended,
    // so a failure it records later is seen by this iteration's waits instead (Patience).
    cache.failure = *const_cast<volatile int*>(program.failure);
    cache.both_cached = fit;
  }
  __syncthreads();
}

// A kReduce and the ones after it that fold more operands into its result (dst = dst op b,
// same dst and count: a gathered allreduce's chain in rank order), in one pass that keeps each
// element in a register: every operand of an element is read before the element is written,
// so the chain stays exact and in-place safe. Returns how many instructions it ran.
template <typename T>
__device__ __forceinline__ uint32_t reduce_chain_typed(uint32_t op, const Instruction* chain,
                                                       uint32_t available, unsigned lane,
                                                       unsigned lanes) {
  const Instruction& head = chain[0];
  uint32_t length = 1;
  while (length < available && chain[length].kind == kReduce && chain[length].dst == head.dst &&
         chain[length].a == head.dst && chain[length].count == head.count)
    ++length;
  T* out = static_cast<T*>(head.dst);
  const T* x = static_cast<const T*>(head.a);
  const T* y = static_cast<const T*>(head.b);
  if (length == 1) {
    // Several elements in flight per thread, as in the copies.
    constexpr unsigned kUnroll = 4;
    uint64_t i = lane;
    for (; i + (kUnroll - 1) * static_cast<uint64_t>(lanes) < head.count; i += kUnroll * lanes) {
      T xs[kUnroll], ys[kUnroll];
#pragma unroll
      for (unsigned k = 0; k < kUnroll; ++k) {
        xs[k] = x[i + k * lanes];
        ys[k] = y[i + k * lanes];
      }
#pragma unroll
      for (unsigned k = 0; k < kUnroll; ++k) out[i + k * lanes] = combine(op, xs[k], ys[k]);
    }
    for (; i < head.count; i += lanes) out[i] = combine(op, x[i], y[i]);
    return 1;
  }
  for (uint64_t i = lane; i < head.count; i += lanes) {
    T value = combine(op, x[i], y[i]);
    for (uint32_t k = 1; k < length; ++k)
      value = combine(op, value, static_cast<const T*>(chain[k].b)[i]);
    out[i] = value;
  }
  return length;
}

__device__ __forceinline__ uint32_t reduce_chain(uint32_t type, uint32_t op,
                                                 const Instruction* chain, uint32_t available,
                                                 unsigned lane, unsigned lanes) {
  uint32_t ran = 1;  // the type is one of tcaDataType's (tcaCollNew checked it)
  tca_reduce::with_type(type, [&](auto element) {
    ran = reduce_chain_typed<decltype(element)>(op, chain, available, lane, lanes);
  });
  return ran;
}

// Waits for an inline message of `count` elements of T and folds it into dst = a op message,
// each lane taking whole elements: the message goes from the mailbox to registers, not through
// scratch and a barrier. With a `forward` mailbox (recursive doubling's next step sends the
// result on), the result goes out from the same registers.
template <typename T>
__device__ __forceinline__ bool await_reduce_typed(uint32_t op, const Instruction& instruction,
                                                   uint32_t flag, unsigned lane, unsigned lanes,
                                                   tca_device_detail::Patience& patience) {
  static_assert(sizeof(T) % 4 == 0, "whole cells per element");
  constexpr unsigned kCells = sizeof(T) / 4;
  T* out = static_cast<T*>(instruction.dst);
  const T* x = static_cast<const T*>(instruction.a);
  const uint64_t tag = static_cast<uint64_t>(flag) << 32;
  for (uint64_t j = lane; j < instruction.count; j += lanes) {
    const uint64_t* cells = instruction.cells + j * kCells;
    const T mine = x[j];
    uint64_t cell[kCells];
    if (!tca_device_detail::await_cells(
            cell, kCells, [&](unsigned w) { return cells + w; }, flag, patience))
      return false;
    uint64_t bits = 0;
#pragma unroll
    for (unsigned w = 0; w < kCells; ++w)
      bits |= static_cast<uint64_t>(static_cast<uint32_t>(cell[w])) << (32 * w);
    T value;
    memcpy(&value, &bits, sizeof(T));
    value = combine(op, mine, value);
    if (instruction.forward != nullptr) {
      memcpy(&bits, &value, sizeof(T));
#pragma unroll
      for (unsigned w = 0; w < kCells; ++w)
        tca_device_detail::store_cell(instruction.forward + j * kCells + w,
                                      tag | static_cast<uint32_t>(bits >> (32 * w)));
    }
    out[j] = value;
  }
  return true;
}

__device__ __forceinline__ bool await_reduce(uint32_t type, uint32_t op,
                                             const Instruction& instruction, uint32_t flag,
                                             unsigned lane, unsigned lanes,
                                             tca_device_detail::Patience& patience) {
  bool arrived = true;
  tca_reduce::with_type(type, [&](auto element) {
    arrived = await_reduce_typed<decltype(element)>(op, instruction, flag, lane, lanes, patience);
  });
  return arrived;
}

// A run of inline sends, or of inline awaits (one per peer), is spread over the block: each
// message gets its own group of lanes, so messages to or from several peers go out and are
// polled at once instead of one after another. Returns the run's length.
__device__ __forceinline__ uint32_t inline_run(const Instruction* instructions, uint32_t n,
                                               uint32_t count, const Segment* segment_table,
                                               uint32_t first_segment, uint32_t flag, unsigned lane,
                                               unsigned lanes,
                                               tca_device_detail::Patience& patience,
                                               int& failure) {
  const uint32_t kind = instructions[n].kind;
  uint32_t length = 1;
  while (n + length < count && instructions[n + length].kind == kind) ++length;
  const unsigned group_lanes = length <= lanes ? lanes / length : 1;
  const uint32_t group = lane / group_lanes;
  if (group >= length) return length;  // lanes left over
  const unsigned group_lane = lane % group_lanes;
  const Instruction& instruction = instructions[n + group];
  if (instruction.segments == 0) {  // a message without data: its flag in one cell
    if (group_lane != 0) return length;
    if (kind == kInlineSend) {
      tca_device_detail::store_cell(instruction.cells, static_cast<uint64_t>(flag) << 32);
    } else {
      uint64_t cell[1];
      if (!tca_device_detail::await_cells(
              cell, 1, [&](unsigned) { return instruction.cells; }, flag, patience))
        failure = TCA_ERROR_TIMEOUT;
    }
    return length;
  }
  const Segment* segments = segment_table + (instruction.first_segment - first_segment);
  uint64_t offset = 0;  // in the message; every segment but the last is whole words
  for (uint32_t s = 0; s < instruction.segments; ++s) {
    if (kind == kInlineSend) {
      tca_device_detail::inline_put(instruction.cells + offset / 4, segments[s].src,
                                    segments[s].bytes, flag, group_lane, group_lanes);
    } else if (!tca_device_detail::inline_wait(instruction.cells + offset / 4, segments[s].dst,
                                               segments[s].bytes, flag, group_lane, group_lanes,
                                               patience)) {
      failure = TCA_ERROR_TIMEOUT;  // racing writers all write the same value
      break;
    }
    offset += segments[s].bytes;
  }
  return length;
}

// One iteration of `program`'s channel blockIdx.x after begin and prefetch (see
// tcaDeviceCollRun).
__device__ __forceinline__ int run(const Program& program, ProgramCache& cache) {
  const unsigned channel = blockIdx.x;
  if (channel >= program.channels) return 0;
  const unsigned lane = tca_device_detail::lane_in_block();
  const unsigned lanes = blockDim.x * blockDim.y * blockDim.z;
  if (cache.failure != 0) {  // read by prefetch
    const int earlier = cache.failure;
    __syncthreads();  // every thread has read `failure` before a next call may rewrite it
    return earlier;
  }
  const Channel& mine = cache.mine;
  const uint64_t it = cache.iteration;
  const unsigned parity = static_cast<unsigned>(it & 1);
  const uint64_t target = it + 1;                                       // signal cells
  const uint32_t flag = static_cast<uint32_t>(it % 0xFFFFFFFFull) + 1;  // inline: never 0
  const uint32_t count = mine.instructions[parity];
  const uint32_t first_segment = mine.first_segment[parity];
  const Instruction* instructions = program.instruction + mine.first_instruction[parity];
  const Segment* segment_table = program.segment + first_segment;
  const uint64_t* cached_words = nullptr;  // this parity's instructions, then its segments
  if (cache.both_cached) {
    cached_words = cache.words + (parity == 0 ? 0 : parity_words(mine, 0));
  } else if (parity_words(mine, parity) * sizeof(uint64_t) <= kProgramCacheBytes) {
    cache_parity(program, cache, parity, 0, lane, lanes);
    __syncthreads();
    cached_words = cache.words;
  }
  if (cached_words != nullptr) {
    instructions = reinterpret_cast<const Instruction*>(cached_words);
    segment_table = reinterpret_cast<const Segment*>(
        cached_words + mine.instructions[parity] * sizeof(Instruction) / sizeof(uint64_t));
  }
  int& failure = cache.failure;
  for (uint32_t n = 0; n < count; ++n) {
    const Instruction& instruction = instructions[n];
    const Segment* segments = segment_table + (instruction.first_segment - first_segment);
    tca_device_detail::Patience patience(program.timeout_ns, program.failure);
    switch (instruction.kind) {
      case kSend:
        for (uint32_t s = 0; s < instruction.segments; ++s)
          tca_device_detail::copy(segments[s].dst, segments[s].src, segments[s].bytes, lane, lanes,
                                  segments[s].local_copy);
        __syncthreads();  // every thread's stores, then the signal's release covers them
        if (lane == 0) tcaDeviceSignalOp(instruction.signal, target, TCA_SIGNAL_SET);
        break;
      case kInlineSend:
      case kInlineAwait:
        n += inline_run(instructions, n, count, segment_table, first_segment, flag, lane, lanes,
                        patience, failure) -
             1;
        break;
      case kInlineAwaitReduce:
        if (!await_reduce(program.type, program.op, instruction, flag, lane, lanes, patience))
          failure = TCA_ERROR_TIMEOUT;
        break;
      case kAwait:
      case kAwaitCredit:
        if (lane == 0 && !await_signal(instruction.signal, target, patience))
          failure = TCA_ERROR_TIMEOUT;
        break;
      case kPostCredit:
        if (lane == 0) tcaDeviceSignalOp(instruction.signal, target, TCA_SIGNAL_SET);
        break;
      case kReduce:
        n += reduce_chain(program.type, program.op, &instruction, count - n, lane, lanes) - 1;
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
  if (lane == 0 && result != 0) {  // channels that fail together write the same code
    *const_cast<volatile int*>(program.failure) = result;
    *const_cast<volatile int*>(program.error) = result;  // host memory
    tcaDeviceFence();
  }
  __syncthreads();  // every thread has read the shared state before a next call rewrites it
  return result;
}

}  // namespace tca_coll_device_detail

__device__ __forceinline__ int tcaDeviceCollRun(tcaDeviceColl coll) {
  const auto& program = *reinterpret_cast<const tca_coll_program::Program*>(coll);
  __shared__ tca_coll_device_detail::ProgramCache cache;
  tca_coll_device_detail::begin(program, cache);
  tca_coll_device_detail::prefetch(program, cache);
  return tca_coll_device_detail::run(program, cache);
}

#endif /* TCA_TCA_COLL_DEVICE_CUH */
