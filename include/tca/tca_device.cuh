// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/*
 * tca device API: GPU-initiated one-sided communication from inside user kernels, with no host in
 * the loop (the model of NVSHMEM's device API, on tca's regions).
 *
 * Pointers come from the host side (tca/tca_cuda.h): tcaDevicePointer gives an address through
 * which this rank's kernels load and store a peer's (or its own) registered region, and
 * tcaDeviceSignal the address of a 64-bit signal cell of any rank (cells live in GPU memory).
 *
 *   put        tcaDevicePut / tcaDevicePutWarp / tcaDevicePutBlock: copy bytes into a peer's
 *              region; the warp and block forms are called by every thread of the group.
 *   signal     tcaDeviceSignalOp: set or add a signal cell, releasing every earlier store of the
 *              calling thread at system scope.
 *   put+signal tcaDevicePutSignal{,Warp,Block}: the data becomes visible before the signal.
 *              When a call returns, the group has read the source (it may be rewritten); the
 *              group's first thread raises the signal, the others return without waiting for it.
 *   wait       tcaDeviceSignalWaitUntil: spins until a local signal compares true, with acquire
 *              semantics (the data behind the signal is then visible to the caller).
 *   fence      tcaDeviceFence: orders the caller's earlier puts before its later puts and signals.
 *   quiet      tcaDeviceQuiet: the caller's earlier puts are complete (visible to every observer).
 *   inline     tcaDeviceInlinePut{,Warp,Block} / tcaDeviceInlineWait{,Warp,Block}: small messages
 *              whose every 8-byte store carries 4 bytes of data and a 32-bit flag, so the data
 *              needs no fence before its signal: the lowest latency for a few KiB (below).
 *
 * Memory ordering is system scope throughout: the observer is another GPU or the host.
 */
#ifndef TCA_TCA_DEVICE_CUH
#define TCA_TCA_DEVICE_CUH

#include <stddef.h>
#include <stdint.h>

#include <cuda/atomic>

typedef enum tcaSignalOp {
  TCA_SIGNAL_SET = 0, /* signal = value */
  TCA_SIGNAL_ADD = 1  /* signal += value (atomic) */
} tcaSignalOp;

typedef enum tcaSignalCmp {
  TCA_CMP_EQ = 0,
  TCA_CMP_NE = 1,
  TCA_CMP_GT = 2,
  TCA_CMP_GE = 3,
  TCA_CMP_LT = 4,
  TCA_CMP_LE = 5
} tcaSignalCmp;

namespace tca_device_detail {

using SystemAtomic = cuda::atomic_ref<uint64_t, cuda::thread_scope_system>;

// The widest access (16, 8, 4, 2 or 1 bytes) at which all the pointers can be aligned together.
__device__ __forceinline__ unsigned common_unit(const void* dst, const void* src,
                                                const void* dst2 = nullptr) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(src);
  uintptr_t mix = reinterpret_cast<uintptr_t>(dst) ^ base;
  if (dst2 != nullptr) mix |= reinterpret_cast<uintptr_t>(dst2) ^ base;
  unsigned unit = 16;
  while (unit > 1 && (mix & (unit - 1)) != 0) unit >>= 1;
  return unit;
}

// kUnroll loads in flight per thread before their stores: one at a time leaves a thread or a
// warp far below the memory's bandwidth, while a whole block has loads enough in flight with one
// each (and copies to a peer faster so: kBlockPutUnroll below).
template <typename Unit, unsigned kUnroll>
__device__ __forceinline__ void copy_units(unsigned char* dst, const unsigned char* src,
                                           size_t units, unsigned lane, unsigned lanes,
                                           unsigned char* dst2) {
  Unit* to = reinterpret_cast<Unit*>(dst);
  Unit* to2 = reinterpret_cast<Unit*>(dst2);
  const Unit* from = reinterpret_cast<const Unit*>(src);
  size_t i = lane;
  for (; i + (kUnroll - 1) * static_cast<size_t>(lanes) < units; i += kUnroll * lanes) {
    Unit staged[kUnroll];
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) staged[k] = from[i + k * lanes];
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) to[i + k * lanes] = staged[k];
    if (to2 != nullptr) {
#pragma unroll
      for (unsigned k = 0; k < kUnroll; ++k) to2[i + k * lanes] = staged[k];
    }
  }
  for (; i < units; i += lanes) {
    const Unit value = from[i];
    to[i] = value;
    if (to2 != nullptr) to2[i] = value;
  }
}

// Copies `bytes` with `lanes` cooperating threads. Where the pointers and the size are all
// multiples of 16 (or 8) bytes, as tcaMalloc'd buffers and whole elements are, it is one loop of
// units that wide; else a byte-wise head up to the common alignment, the body in units as wide as
// that alignment allows, a byte-wise tail. With `dst2`, every byte read is also stored there (one
// read for two copies). Sizes are divided by shifts: a 64-bit division by a run-time unit costs
// a GPU thread far more than a small put's stores (0.3 us of an 8-byte put with signal).
template <unsigned kUnroll = 4>
__device__ __forceinline__ void copy(void* dst_ptr, const void* src_ptr, size_t bytes,
                                     unsigned lane, unsigned lanes, void* dst2_ptr = nullptr) {
  unsigned char* dst = static_cast<unsigned char*>(dst_ptr);
  unsigned char* dst2 = static_cast<unsigned char*>(dst2_ptr);
  const unsigned char* src = static_cast<const unsigned char*>(src_ptr);
  const uintptr_t all = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) |
                        reinterpret_cast<uintptr_t>(dst2) | static_cast<uintptr_t>(bytes);
  if ((all & 15) == 0) {
    copy_units<uint4, kUnroll>(dst, src, bytes >> 4, lane, lanes, dst2);
    return;
  }
  if ((all & 7) == 0) {
    copy_units<uint2, kUnroll>(dst, src, bytes >> 3, lane, lanes, dst2);
    return;
  }
  const unsigned unit = common_unit(dst, src, dst2);
  const unsigned shift = static_cast<unsigned>(__ffs(static_cast<int>(unit)) - 1);
  size_t head = (unit - (reinterpret_cast<uintptr_t>(dst) & (unit - 1))) & (unit - 1);
  if (head > bytes) head = bytes;
  copy_units<unsigned char, kUnroll>(dst, src, head, lane, lanes, dst2);
  dst += head;
  src += head;
  if (dst2 != nullptr) dst2 += head;
  bytes -= head;
  const size_t units = bytes >> shift;
  switch (unit) {
    case 16:
      copy_units<uint4, kUnroll>(dst, src, units, lane, lanes, dst2);
      break;
    case 8:
      copy_units<uint2, kUnroll>(dst, src, units, lane, lanes, dst2);
      break;
    case 4:
      copy_units<uint32_t, kUnroll>(dst, src, units, lane, lanes, dst2);
      break;
    case 2:
      copy_units<uint16_t, kUnroll>(dst, src, units, lane, lanes, dst2);
      break;
    default:
      copy_units<unsigned char, kUnroll>(dst, src, units, lane, lanes, dst2);
      break;
  }
  const size_t body = units << shift;
  copy_units<unsigned char, kUnroll>(dst + body, src + body, bytes - body, lane, lanes,
                                     dst2 != nullptr ? dst2 + body : nullptr);
}

__device__ __forceinline__ unsigned lane_in_block() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ bool compare(uint64_t seen, tcaSignalCmp cmp, uint64_t value) {
  switch (cmp) {
    case TCA_CMP_EQ:
      return seen == value;
    case TCA_CMP_NE:
      return seen != value;
    case TCA_CMP_GT:
      return seen > value;
    case TCA_CMP_GE:
      return seen >= value;
    case TCA_CMP_LT:
      return seen < value;
    default:
      return seen <= value;
  }
}

}  // namespace tca_device_detail

/* ---- fence and quiet ---- */
__device__ __forceinline__ void tcaDeviceFence() {
  cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_system);
}
/* Stores are complete once a system-scope fence has passed them: quiet is that fence. */
__device__ __forceinline__ void tcaDeviceQuiet() { tcaDeviceFence(); }

/* ---- signals ---- */
__device__ __forceinline__ void tcaDeviceSignalOp(uint64_t* signal, uint64_t value,
                                                  tcaSignalOp op) {
  tca_device_detail::SystemAtomic cell(*signal);
  if (op == TCA_SIGNAL_ADD) {
    cell.fetch_add(value, cuda::memory_order_release);
  } else {
    cell.store(value, cuda::memory_order_release);
  }
}

/* Spins until `*signal cmp value` holds; returns the value seen. Acquire at system scope. */
__device__ __forceinline__ uint64_t tcaDeviceSignalWaitUntil(const uint64_t* signal,
                                                             tcaSignalCmp cmp, uint64_t value) {
  tca_device_detail::SystemAtomic cell(*const_cast<uint64_t*>(signal));
  for (;;) {
    // Each poll is an acquire load: the one that sees the value synchronizes with the sender's
    // release, ordering the data behind the signal, without the system-wide fence an acquire
    // fence would cost (about a microsecond). Polling relaxed and then loading once more with
    // acquire measured 0.07-0.15 us slower one way (H200 pair, 8 B to 1 MiB).
    const uint64_t seen = cell.load(cuda::memory_order_acquire);
    if (tca_device_detail::compare(seen, cmp, value)) return seen;
  }
}

namespace tca_device_detail {
// The signal of a group's put: the caller's system-scope fence (cumulative: it also orders the
// group's stores that the group's barrier made visible to the caller) and this relaxed write
// form a release pattern, so the write needs no second fence of its own.
__device__ __forceinline__ void signal_after_fence(uint64_t* signal, uint64_t value,
                                                   tcaSignalOp op) {
  SystemAtomic cell(*signal);
  if (op == TCA_SIGNAL_ADD) {
    cell.fetch_add(value, cuda::memory_order_relaxed);
  } else {
    cell.store(value, cuda::memory_order_relaxed);
  }
}
}  // namespace tca_device_detail

/* ---- puts ---- */
__device__ __forceinline__ void tcaDevicePut(void* dst, const void* src, size_t bytes) {
  tca_device_detail::copy(dst, src, bytes, 0, 1);
}

/* Called by all 32 lanes of a warp with the same arguments. */
__device__ __forceinline__ void tcaDevicePutWarp(void* dst, const void* src, size_t bytes) {
  tca_device_detail::copy(dst, src, bytes, tca_device_detail::lane_in_block() % 32, 32);
  __syncwarp();
}

namespace tca_device_detail {
// One load in flight per thread of a block's put: with 1024 threads, put with signal went
// 0.9-4.5% faster from 8 B to 64 KiB than with four (2 H200s, tca-pingpong, builds alternating
// in one call; docs/PERFORMANCE.md), level at 1 MiB.
constexpr unsigned kBlockPutUnroll = 1;
}  // namespace tca_device_detail

/* Called by every thread of the block with the same arguments. */
__device__ __forceinline__ void tcaDevicePutBlock(void* dst, const void* src, size_t bytes) {
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  tca_device_detail::copy<tca_device_detail::kBlockPutUnroll>(
      dst, src, bytes, tca_device_detail::lane_in_block(), threads);
  __syncthreads();
}

/* ---- put with signal: the signal is raised only after the data is visible ---- */
__device__ __forceinline__ void tcaDevicePutSignal(void* dst, const void* src, size_t bytes,
                                                   uint64_t* signal, uint64_t value,
                                                   tcaSignalOp op) {
  tcaDevicePut(dst, src, bytes);
  tcaDeviceSignalOp(signal, value, op);  // the release orders this thread's stores first
}

__device__ __forceinline__ void tcaDevicePutSignalWarp(void* dst, const void* src, size_t bytes,
                                                       uint64_t* signal, uint64_t value,
                                                       tcaSignalOp op) {
  tcaDevicePutWarp(dst, src, bytes);
  if (tca_device_detail::lane_in_block() % 32 == 0) {
    tcaDeviceFence();  // the other lanes' stores, ordered before us by __syncwarp
    tca_device_detail::signal_after_fence(signal, value, op);
  }
}

__device__ __forceinline__ void tcaDevicePutSignalBlock(void* dst, const void* src, size_t bytes,
                                                        uint64_t* signal, uint64_t value,
                                                        tcaSignalOp op) {
  tcaDevicePutBlock(dst, src, bytes);
  if (tca_device_detail::lane_in_block() == 0) {
    tcaDeviceFence();  // the other threads' stores, ordered before us by __syncthreads
    tca_device_detail::signal_after_fence(signal, value, op);
  }
}

/* ---- inline messages: data and flag in one store ----
 * The receiver owns a mailbox of tcaInlineCells(bytes) 64-bit cells in its GPU memory (e.g. in
 * a tcaMalloc'd GPU region; the sender reaches it through tcaDevicePointer), 8-byte aligned and
 * zero at first. A put stores each 4 bytes of the message with the message's flag beside them
 * in an 8-byte cell, which arrives whole; the receiver's wait polls the cells until they show
 * the flag, then writes the data to its destination. No fence orders data before a signal, so a
 * message costs one store's flight. Flags must not be 0 and must differ from the flag of the
 * mailbox's previous message (e.g. a sequence number 1, 2, 3, ...); the sender must not put the
 * next message before the receiver's wait for the previous one has returned. A mailbox cell
 * carries half its size in data: for bulk data, puts and signals cost less. */
__host__ __device__ constexpr size_t tcaInlineCells(size_t bytes) { return (bytes + 3) / 4; }

namespace tca_device_detail {

__device__ __forceinline__ uint32_t load_word(const unsigned char* src, size_t offset,
                                              size_t bytes) {
  if (offset + 4 <= bytes && (reinterpret_cast<uintptr_t>(src + offset) & 3) == 0)
    return *reinterpret_cast<const uint32_t*>(src + offset);
  uint32_t word = 0;
  for (unsigned i = 0; i < 4 && offset + i < bytes; ++i)
    word |= static_cast<uint32_t>(src[offset + i]) << (8 * i);
  return word;
}

__device__ __forceinline__ void store_word(unsigned char* dst, size_t offset, size_t bytes,
                                           uint32_t word) {
  if (offset + 4 <= bytes && (reinterpret_cast<uintptr_t>(dst + offset) & 3) == 0) {
    *reinterpret_cast<uint32_t*>(dst + offset) = word;
    return;
  }
  for (unsigned i = 0; i < 4 && offset + i < bytes; ++i)
    dst[offset + i] = static_cast<unsigned char>(word >> (8 * i));
}

__device__ __forceinline__ void store_cell(uint64_t* cell, uint64_t value) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(cell), "l"(value) : "memory");
}

__device__ __forceinline__ uint64_t load_cell(const uint64_t* cell) {
  uint64_t value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(cell) : "memory");
  return value;
}

__device__ __forceinline__ uint64_t global_time_ns() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// This lane's cells of the message: word i of `src` with `flag` in the high half of cell i.
__device__ __forceinline__ void inline_put(uint64_t* cells, const void* src, size_t bytes,
                                           uint32_t flag, unsigned lane, unsigned lanes) {
  const unsigned char* from = static_cast<const unsigned char*>(src);
  const uint64_t tag = static_cast<uint64_t>(flag) << 32;
  for (size_t i = lane; i < tcaInlineCells(bytes); i += lanes)
    store_cell(cells + i, tag | load_word(from, 4 * i, bytes));
}

// A wait's clock: it reads the (slow) global timer only once a wait has polled for a while,
// so waits that succeed at once cost no timer read. timeout_ns 0: never gives up. With
// `abandon`, it also gives up once that word is nonzero (read on the same slow path).
class Patience {
 public:
  __device__ explicit Patience(uint64_t timeout_ns, const int* abandon = nullptr)
      : timeout_ns_(timeout_ns), abandon_(abandon) {}
  // Called after each failed poll; false once the timeout has passed or the wait is abandoned.
  __device__ __forceinline__ bool another_poll() {
    if (++polls_ % 1024 != 0) return true;
    if (abandon_ != nullptr && *const_cast<const volatile int*>(abandon_) != 0) return false;
    if (timeout_ns_ == 0) return true;
    const uint64_t now = global_time_ns();
    if (deadline_ns_ == 0) deadline_ns_ = now + timeout_ns_;
    return now <= deadline_ns_;
  }

 private:
  uint64_t timeout_ns_;
  const int* abandon_;
  uint64_t deadline_ns_ = 0;
  unsigned polls_ = 0;
};

__device__ __forceinline__ uint32_t flag_of(uint64_t cell) {
  return static_cast<uint32_t>(cell >> 32);
}

// Loads the first `valid` of kCount cells (cell k at address(k)) until each shows `flag`. Every
// round reloads all the cells still missing at once: the cells of a message land together, and
// a loop per cell would find the later ones stale and pay a round trip for each.
template <unsigned kCount, typename Address>
__device__ __forceinline__ bool await_cells(uint64_t (&cell)[kCount], unsigned valid,
                                            Address address, uint32_t flag, Patience& patience) {
#pragma unroll
  for (unsigned k = 0; k < kCount; ++k)
    if (k < valid) cell[k] = load_cell(address(k));
  for (;;) {
    bool missing = false;
#pragma unroll
    for (unsigned k = 0; k < kCount; ++k) missing |= k < valid && flag_of(cell[k]) != flag;
    if (!missing) return true;
    if (!patience.another_poll()) return false;
#pragma unroll
    for (unsigned k = 0; k < kCount; ++k)
      if (k < valid && flag_of(cell[k]) != flag) cell[k] = load_cell(address(k));
  }
}

// Waits for this lane's cells and writes their data to `dst`; false if `patience` ran out.
// Cells are awaited in batches: once a message's first cell has arrived the rest mostly have
// too, and a load's round trip costs as much as a poll.
__device__ __forceinline__ bool inline_wait(const uint64_t* cells, void* dst, size_t bytes,
                                            uint32_t flag, unsigned lane, unsigned lanes,
                                            Patience& patience) {
  constexpr unsigned kBatch = 4;
  unsigned char* to = static_cast<unsigned char*>(dst);
  const size_t total = tcaInlineCells(bytes);
  const size_t stride = lanes;
  for (size_t first = lane; first < total; first += kBatch * stride) {
    const unsigned valid = static_cast<unsigned>(
        min(static_cast<size_t>(kBatch), (total - first + stride - 1) / stride));
    uint64_t cell[kBatch];
    if (!await_cells(
            cell, valid, [&](unsigned k) { return cells + first + k * stride; }, flag, patience))
      return false;
#pragma unroll
    for (unsigned k = 0; k < kBatch; ++k)
      if (k < valid)
        store_word(to, 4 * (first + k * stride), bytes, static_cast<uint32_t>(cell[k]));
  }
  return true;
}

}  // namespace tca_device_detail

/* Stores `bytes` of `src` with `flag` into the peer's mailbox `cells`. */
__device__ __forceinline__ void tcaDeviceInlinePut(uint64_t* cells, const void* src, size_t bytes,
                                                   uint32_t flag) {
  tca_device_detail::inline_put(cells, src, bytes, flag, 0, 1);
}
__device__ __forceinline__ void tcaDeviceInlinePutWarp(uint64_t* cells, const void* src,
                                                       size_t bytes, uint32_t flag) {
  tca_device_detail::inline_put(cells, src, bytes, flag, tca_device_detail::lane_in_block() % 32,
                                32);
  __syncwarp();
}
__device__ __forceinline__ void tcaDeviceInlinePutBlock(uint64_t* cells, const void* src,
                                                        size_t bytes, uint32_t flag) {
  tca_device_detail::inline_put(cells, src, bytes, flag, tca_device_detail::lane_in_block(),
                                blockDim.x * blockDim.y * blockDim.z);
  __syncthreads();
}

/* Waits until the message with `flag` is in the own mailbox `cells` and writes its `bytes` to
 * `dst` (visible to the caller; to its warp / block after the warp / block forms). */
__device__ __forceinline__ void tcaDeviceInlineWait(const uint64_t* cells, void* dst, size_t bytes,
                                                    uint32_t flag) {
  tca_device_detail::Patience forever(0);
  tca_device_detail::inline_wait(cells, dst, bytes, flag, 0, 1, forever);
}
__device__ __forceinline__ void tcaDeviceInlineWaitWarp(const uint64_t* cells, void* dst,
                                                        size_t bytes, uint32_t flag) {
  tca_device_detail::Patience forever(0);
  tca_device_detail::inline_wait(cells, dst, bytes, flag, tca_device_detail::lane_in_block() % 32,
                                 32, forever);
  __syncwarp();
}
__device__ __forceinline__ void tcaDeviceInlineWaitBlock(const uint64_t* cells, void* dst,
                                                         size_t bytes, uint32_t flag) {
  tca_device_detail::Patience forever(0);
  tca_device_detail::inline_wait(cells, dst, bytes, flag, tca_device_detail::lane_in_block(),
                                 blockDim.x * blockDim.y * blockDim.z, forever);
  __syncthreads();
}

#endif /* TCA_TCA_DEVICE_CUH */
