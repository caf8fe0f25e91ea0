// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernels of the CUDA transport: the SM copy path, notification raising and the stream-side
// wait for a notification.
#include "tca/tca_device.cuh"
#include "transport/cuda/kernels.h"

namespace tca {
namespace {

// Publishes one notification after everything this thread ordered before it, counting it on
// the GPU. The sequence is read and written, not atomically incremented: it lives in host
// memory, where a GPU atomic would need PCIe atomics, and one engine at a time counts for a
// slot (docs/CUDA.md).
__device__ void raise_counted_notification(const NotifyTarget& target) {
  tca_device_detail::SystemAtomic counter(*target.counter);
  const uint64_t value = counter.load(cuda::memory_order_relaxed) + 1;
  counter.store(value, cuda::memory_order_relaxed);
  tcaDeviceSignalOp(target.cell, value, TCA_SIGNAL_SET);
}

// The values are indexed by constants only: an index the compiler cannot resolve would copy the
// whole parameter block into every thread's local memory at the kernel's start.
__device__ void raise_notifications(const SmCopyParams& params) {
  if (params.count_on_gpu) {
    for (uint32_t i = 0; i < params.notify_count; ++i)
      raise_counted_notification(params.notifies[i]);
    return;
  }
#pragma unroll
  for (uint32_t i = 0; i < kInlineNotifyValues; ++i)
    if (i < params.notify_count)
      tcaDeviceSignalOp(params.notifies[i].cell, params.values[i], TCA_SIGNAL_SET);
}

// The piece holding `unit`, searching from `hint` on: a thread's units only grow.
__device__ uint32_t find_piece(const SmCopyParams& params, uint32_t hint, uint64_t unit) {
  const SmPiece& current = params.pieces[hint];
  if (unit < current.first_unit + current.units) return hint;
  uint32_t low = hint + 1;
  uint32_t high = params.piece_count - 1;
  while (low < high) {  // the last piece whose first unit is <= unit
    const uint32_t middle = low + (high - low + 1) / 2;
    if (params.pieces[middle].first_unit <= unit) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return low;
}

__device__ __forceinline__ uint4 load_unit(const unsigned char* src, uint32_t bytes) {
  uint4 value = {0, 0, 0, 0};
  switch (bytes) {
    case 16:
      value = *reinterpret_cast<const uint4*>(src);
      break;
    case 8:
      *reinterpret_cast<uint2*>(&value) = *reinterpret_cast<const uint2*>(src);
      break;
    case 4:
      value.x = *reinterpret_cast<const uint32_t*>(src);
      break;
    case 2:
      value.x = *reinterpret_cast<const uint16_t*>(src);
      break;
    default:
      value.x = *src;
      break;
  }
  return value;
}

__device__ __forceinline__ void store_unit(unsigned char* dst, const uint4& value, uint32_t bytes) {
  switch (bytes) {
    case 16:
      *reinterpret_cast<uint4*>(dst) = value;
      break;
    case 8:
      *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(&value);
      break;
    case 4:
      *reinterpret_cast<uint32_t*>(dst) = value.x;
      break;
    case 2:
      *reinterpret_cast<uint16_t*>(dst) = static_cast<uint16_t>(value.x);
      break;
    default:
      *dst = static_cast<unsigned char>(value.x);
      break;
  }
}

// Narrow rows gathered into 16 bytes: `rows` (16 / bytes) rows of `bytes` from `src`, `pitch`
// apart. Each case's loop is unrolled, so the value stays in registers.
template <typename Word>
__device__ __forceinline__ uint4 gather_words(const unsigned char* src, uint64_t pitch) {
  constexpr unsigned kWords = sizeof(uint4) / sizeof(Word);
  uint4 value;
  Word* words = reinterpret_cast<Word*>(&value);
#pragma unroll
  for (unsigned r = 0; r < kWords; ++r) words[r] = *reinterpret_cast<const Word*>(src + r * pitch);
  return value;
}

template <typename Word>
__device__ __forceinline__ void scatter_words(unsigned char* dst, uint64_t pitch,
                                              const uint4& value) {
  constexpr unsigned kWords = sizeof(uint4) / sizeof(Word);
  const Word* words = reinterpret_cast<const Word*>(&value);
#pragma unroll
  for (unsigned r = 0; r < kWords; ++r) *reinterpret_cast<Word*>(dst + r * pitch) = words[r];
}

__device__ __forceinline__ uint4 gather_unit(const unsigned char* src, uint64_t pitch,
                                             uint32_t bytes) {
  switch (bytes) {
    case 8:
      return gather_words<uint2>(src, pitch);
    case 4:
      return gather_words<uint32_t>(src, pitch);
    case 2:
      return gather_words<uint16_t>(src, pitch);
    default:
      return gather_words<unsigned char>(src, pitch);
  }
}

__device__ __forceinline__ void scatter_unit(unsigned char* dst, uint64_t pitch, const uint4& value,
                                             uint32_t bytes) {
  switch (bytes) {
    case 8:
      scatter_words<uint2>(dst, pitch, value);
      break;
    case 4:
      scatter_words<uint32_t>(dst, pitch, value);
      break;
    case 2:
      scatter_words<uint16_t>(dst, pitch, value);
      break;
    default:
      scatter_words<unsigned char>(dst, pitch, value);
      break;
  }
}

// A unit loaded and waiting for its store: `rows` stores of `bytes`, `pitch` apart (one store
// but for a scatter of narrow rows).
struct PendingStore {
  uint4 value;
  unsigned char* dst;
  uint64_t pitch;
  uint32_t bytes;
  uint32_t rows;
};

// Loads unit `local` of piece `p` (the launch-wide numbering minus the piece's first unit).
__device__ __forceinline__ PendingStore load_piece_unit(const SmPiece& p, uint64_t local) {
  PendingStore pending;
  pending.rows = 1;
  pending.pitch = 0;
  if (p.narrow_rows > 1) {
    const uint64_t row = local * p.narrow_rows;
    if (p.packed_dst) {
      pending.value = gather_unit(p.src + row * p.src_pitch, p.src_pitch, p.unit_bytes);
      pending.dst = p.dst + local * sizeof(uint4);
      pending.bytes = sizeof(uint4);
    } else {
      pending.value = *reinterpret_cast<const uint4*>(p.src + local * sizeof(uint4));
      pending.dst = p.dst + row * p.dst_pitch;
      pending.pitch = p.dst_pitch;
      pending.bytes = p.unit_bytes;
      pending.rows = p.narrow_rows;
    }
    return pending;
  }
  // Contiguous pieces and one-unit rows skip the 64-bit division.
  const uint64_t row = p.units_per_row == p.units ? 0
                       : p.units_per_row == 1     ? local
                                                  : local / p.units_per_row;
  const uint64_t column_bytes = (local - row * p.units_per_row) * p.unit_bytes;
  pending.bytes = p.unit_bytes;
  pending.dst = p.dst + row * p.dst_pitch + column_bytes;
  pending.value = load_unit(p.src + row * p.src_pitch + column_bytes, p.unit_bytes);
  return pending;
}

// The calling thread moves units first, first + stride, ... of the launch's numbering;
// kSmCopyUnroll of them are loaded before any is stored, so that several remote round trips
// overlap. kOnePiece: the launch's only piece is read from its parameters, so no load of the
// piece table stands before the first data load.
template <bool kOnePiece>
__device__ __forceinline__ void copy_units(const SmCopyParams& params, uint64_t first,
                                           uint64_t stride) {
  uint32_t piece = 0;
  for (uint64_t base = first; base < params.total_units; base += stride * kSmCopyUnroll) {
    PendingStore pending[kSmCopyUnroll];
#pragma unroll
    for (unsigned k = 0; k < kSmCopyUnroll; ++k) {
      const uint64_t unit = base + k * stride;
      pending[k].bytes = 0;
      if (unit >= params.total_units) continue;
      if (!kOnePiece) piece = find_piece(params, piece, unit);
      const SmPiece& p = kOnePiece ? params.first_piece : params.pieces[piece];
      pending[k] = load_piece_unit(p, unit - p.first_unit);
    }
#pragma unroll
    for (unsigned k = 0; k < kSmCopyUnroll; ++k) {
      if (pending[k].bytes == 0) continue;
      if (pending[k].rows == 1) {
        store_unit(pending[k].dst, pending[k].value, pending[k].bytes);
      } else {
        scatter_unit(pending[k].dst, pending[k].pitch, pending[k].value, pending[k].bytes);
      }
    }
  }
}

__device__ void copy_phase(const SmCopyParams& params, uint64_t first, uint64_t stride) {
  if (params.piece_count == 1) {
    copy_units<true>(params, first, stride);
  } else {
    copy_units<false>(params, first, stride);
  }
}

__global__ void __launch_bounds__(kSmCopyThreads) sm_copy_kernel(SmCopyParams params) {
  copy_phase(params, static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
             static_cast<uint64_t>(gridDim.x) * blockDim.x);
  if (params.notify_count == 0) return;
  __syncthreads();
  if (gridDim.x == 1) {  // one block: its barrier already orders every store
    if (threadIdx.x == 0) raise_notifications(params);
    return;
  }

  // The last block to finish raises the notifications, after every block's stores.
  __shared__ bool last_block;
  if (threadIdx.x == 0) {
    tcaDeviceFence();  // this block's stores, ordered before thread 0 by the barrier
    last_block = atomicAdd(params.blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block || threadIdx.x != 0) return;
  tcaDeviceFence();  // the stores of every block whose count we have seen
  *params.blocks_done = 0;
  raise_notifications(params);
}

__global__ void notify_kernel(const NotifyTarget* targets, uint32_t count) {
  tcaDeviceFence();
  for (uint32_t i = 0; i < count; ++i) raise_counted_notification(targets[i]);
}

using tca_device_detail::global_time_ns;

__global__ void notification_wait_kernel(const uint64_t* cell, uint64_t* consumed,
                                         uint64_t timeout_ns, unsigned int* timed_out) {
  tca_device_detail::SystemAtomic sequence(*consumed);
  const uint64_t expected = sequence.load(cuda::memory_order_relaxed) + 1;
  sequence.store(expected, cuda::memory_order_relaxed);
  const uint64_t deadline = global_time_ns() + timeout_ns;
  tca_device_detail::SystemAtomic arrived(*const_cast<uint64_t*>(cell));
  while (arrived.load(cuda::memory_order_acquire) < expected) {
    if (global_time_ns() > deadline) {
      cuda::atomic_ref<unsigned int, cuda::thread_scope_system>(*timed_out)
          .store(1, cuda::memory_order_relaxed);
      return;
    }
    __nanosleep(64);  // the cell is host memory: polling it costs a PCIe round trip anyway
  }
}

// A kick as the resident kernel's poller publishes it to the block (shared memory).
struct ResidentKick {
  const SmCopyParams* phases;  // null: leave
  uint64_t values[kInlineNotifyValues];
};

// Warp 1 of the resident kernel (warp 0 raises the notifications, and its fences then never
// wait for a poll in flight): waits until kick `sequence`'s slot shows it and publishes the
// kick in `kick`. Lane 0 polls the tag and the first value with one 16-byte load (a kick of at
// most one notification is then complete); the other values, written before the tag, are
// read once it shows. Idle for `idle_ns` without a kick it could have missed, it publishes a
// leave instead. One poller: four warps polling a quarter of a round trip apart took 6.8-7.1 us
// per 8-byte ping-pong against 4.9-5.0 (two H200s, docs/PERFORMANCE.md).
__device__ void await_kick(ResidentRing* ring, uint64_t sequence, uint64_t idle_ns,
                           ResidentKick& kick) {
  using tca_device_detail::load_cell;
  constexpr unsigned kAllLanes = 0xffffffffu;
  const unsigned lane = threadIdx.x % 32;
  const ResidentSlot& slot = ring->slots[(sequence - 1) % kResidentSlots];
  const uint64_t expected = sequence & (~uint64_t{0} >> kResidentSequenceShift);
  const auto stamped = [&](uint64_t word) { return word >> kResidentSequenceShift == expected; };
  uint64_t tag = 0;
  uint64_t first_value = 0;
  uint64_t idle_since = 0;
  for (unsigned polls = 1;; ++polls) {
    bool leave = false;
    bool complete = false;
    if (lane == 0) {
      // An acquire load: the poll that sees the kick synchronizes with the host's release of
      // the tag, so the source and the phases written before it are visible after it (to the
      // block through its barrier) without a system-scope acquire fence, which cost 0.59 us
      // (GPU flag ping-pong on two H200s).
      asm volatile("ld.acquire.sys.global.v2.u64 {%0, %1}, [%2];"
                   : "=l"(tag), "=l"(first_value)
                   : "l"(&slot.tag)
                   : "memory");
      complete = stamped(tag) && stamped(first_value);
      if (!stamped(tag) && polls % 16 == 0) {  // a poll of host memory takes about 1 us
        const uint64_t now = global_time_ns();
        if (idle_since == 0) idle_since = now;
        if (now - idle_since >= idle_ns) {
          // Leaving is a Dekker handshake with the host's kick (kernels.h).
          cuda::atomic_ref<uint32_t, cuda::thread_scope_system> leaving(ring->leaving);
          leaving.store(1, cuda::memory_order_relaxed);
          cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
          leave = !stamped(load_cell(&slot.tag));
          if (!leave) leaving.store(0, cuda::memory_order_relaxed);  // serve it: the host waits
        }
      }
    }
    if (__shfl_sync(kAllLanes, leave, 0)) {
      if (lane == 0) kick.phases = nullptr;
      return;
    }
    if (__shfl_sync(kAllLanes, complete, 0)) break;
  }
  tag = __shfl_sync(kAllLanes, tag, 0);
  const unsigned count = static_cast<unsigned>(tag & kResidentCountMask);
  uint64_t value = __shfl_sync(kAllLanes, first_value, 0);
  if (lane >= 1 && lane < count) {
    do {
      value = load_cell(&slot.values[lane]);
    } while (!stamped(value));
  }
  if (lane == 0) {
    kick.phases =
        reinterpret_cast<const SmCopyParams*>(tag & kResidentPayloadMask & ~kResidentCountMask);
  }
  if (lane < count) kick.values[lane] = value & kResidentPayloadMask;
}

// The resident kernel: one block serving kicks in order until it leaves. Each phase's stores
// are ordered before its notifications and the next phase by the block's barrier; the kick's
// completion is released after everything.
__global__ void __launch_bounds__(kSmCopyThreads)
    resident_server(ResidentRing* ring, uint64_t served, uint64_t idle_ns) {
  __shared__ ResidentKick kick;
  for (;;) {
    if (threadIdx.x / 32 == 1) await_kick(ring, served + 1, idle_ns, kick);
    __syncthreads();
    const SmCopyParams* phases = kick.phases;
    if (phases == nullptr) return;  // idle, or the host's stop
    ++served;
    uint32_t raised = 0;
    for (const SmCopyParams* phase = phases; phase->piece_count != 0; ++phase) {
      copy_phase(*phase, threadIdx.x, blockDim.x);
      __syncthreads();
      if (threadIdx.x == 0)
        for (uint32_t i = 0; i < phase->notify_count; ++i)
          tcaDeviceSignalOp(phase->notifies[i].cell, kick.values[raised + i], TCA_SIGNAL_SET);
      raised += phase->notify_count;
    }
    if (threadIdx.x == 0)
      tca_device_detail::SystemAtomic(ring->completed).store(served, cuda::memory_order_release);
    __syncthreads();  // every thread has read the kick before the next one is published
  }
}

}  // namespace

cudaError_t launch_resident_server(ResidentRing* ring, uint64_t served, uint64_t idle_ns,
                                   cudaStream_t stream) {
  resident_server<<<1, kSmCopyThreads, 0, stream>>>(ring, served, idle_ns);
  return cudaGetLastError();
}

cudaError_t launch_sm_copy(const SmCopyParams& params, unsigned blocks, unsigned threads,
                           cudaStream_t stream) {
  sm_copy_kernel<<<blocks, threads, 0, stream>>>(params);
  return cudaGetLastError();
}

namespace {

// Node parameters of an SM copy launch; `argument` must outlive their use.
cudaKernelNodeParams sm_copy_node_params(const SmCopyParams& params, unsigned blocks,
                                         unsigned threads, void** argument) {
  *argument = const_cast<SmCopyParams*>(&params);
  cudaKernelNodeParams node = {};
  node.func = reinterpret_cast<void*>(&sm_copy_kernel);
  node.gridDim = dim3(blocks);
  node.blockDim = dim3(threads);
  node.kernelParams = argument;
  return node;
}

}  // namespace

cudaError_t add_sm_copy_node(cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                             size_t dependency_count, const SmCopyParams& params, unsigned blocks,
                             unsigned threads, cudaGraphNode_t* node) {
  void* argument = nullptr;
  const cudaKernelNodeParams node_params = sm_copy_node_params(params, blocks, threads, &argument);
  return cudaGraphAddKernelNode(node, graph, dependencies, dependency_count, &node_params);
}

cudaError_t set_sm_copy_node(cudaGraphExec_t exec, cudaGraphNode_t node, const SmCopyParams& params,
                             unsigned blocks, unsigned threads) {
  void* argument = nullptr;
  const cudaKernelNodeParams node_params = sm_copy_node_params(params, blocks, threads, &argument);
  return cudaGraphExecKernelNodeSetParams(exec, node, &node_params);
}

cudaError_t add_notify_node(cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                            size_t dependency_count, const NotifyTarget* targets, uint32_t count,
                            cudaGraphNode_t* node) {
  void* arguments[] = {&targets, &count};
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void*>(&notify_kernel);
  params.gridDim = dim3(1);
  params.blockDim = dim3(1);
  params.kernelParams = arguments;
  return cudaGraphAddKernelNode(node, graph, dependencies, dependency_count, &params);
}

cudaError_t launch_notification_wait(const uint64_t* cell, uint64_t* consumed, uint64_t timeout_ns,
                                     unsigned int* timed_out, cudaStream_t stream) {
  notification_wait_kernel<<<1, 1, 0, stream>>>(cell, consumed, timeout_ns, timed_out);
  return cudaGetLastError();
}

}  // namespace tca
