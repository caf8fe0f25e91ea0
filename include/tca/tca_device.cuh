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
 *   wait       tcaDeviceSignalWaitUntil: spins until a local signal compares true, with acquire
 *              semantics (the data behind the signal is then visible to the caller).
 *   fence      tcaDeviceFence: orders the caller's earlier puts before its later puts and signals.
 *   quiet      tcaDeviceQuiet: the caller's earlier puts are complete (visible to every observer).
 *
 * Memory ordering is system scope throughout: the observer is another GPU or the host.
 */
#ifndef TCA_TCA_DEVICE_CUH
#define TCA_TCA_DEVICE_CUH

#include <cuda/atomic>
#include <stddef.h>
#include <stdint.h>

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

// The widest access (16, 8, 4, 2 or 1 bytes) at which both pointers can be aligned together.
__device__ __forceinline__ unsigned common_unit(const void* dst, const void* src) {
  const uintptr_t mix = reinterpret_cast<uintptr_t>(dst) ^ reinterpret_cast<uintptr_t>(src);
  unsigned unit = 16;
  while (unit > 1 && (mix & (unit - 1)) != 0) unit >>= 1;
  return unit;
}

template <typename Unit>
__device__ __forceinline__ void copy_units(unsigned char* dst, const unsigned char* src,
                                           size_t units, unsigned lane, unsigned lanes) {
  Unit* to = reinterpret_cast<Unit*>(dst);
  const Unit* from = reinterpret_cast<const Unit*>(src);
  for (size_t i = lane; i < units; i += lanes) to[i] = from[i];
}

// Copies `bytes` with `lanes` cooperating threads: a byte-wise head up to the common
// alignment, the body in units as wide as that alignment allows, a byte-wise tail.
__device__ __forceinline__ void copy(void* dst_ptr, const void* src_ptr, size_t bytes,
                                     unsigned lane, unsigned lanes) {
  unsigned char* dst = static_cast<unsigned char*>(dst_ptr);
  const unsigned char* src = static_cast<const unsigned char*>(src_ptr);
  const unsigned unit = common_unit(dst, src);
  size_t head = (unit - (reinterpret_cast<uintptr_t>(dst) & (unit - 1))) & (unit - 1);
  if (head > bytes) head = bytes;
  copy_units<unsigned char>(dst, src, head, lane, lanes);
  dst += head;
  src += head;
  bytes -= head;
  const size_t units = bytes / unit;
  switch (unit) {
    case 16: copy_units<uint4>(dst, src, units, lane, lanes); break;
    case 8: copy_units<uint2>(dst, src, units, lane, lanes); break;
    case 4: copy_units<uint32_t>(dst, src, units, lane, lanes); break;
    case 2: copy_units<uint16_t>(dst, src, units, lane, lanes); break;
    default: copy_units<unsigned char>(dst, src, units, lane, lanes); break;
  }
  const size_t body = units * unit;
  copy_units<unsigned char>(dst + body, src + body, bytes - body, lane, lanes);
}

__device__ __forceinline__ unsigned lane_in_block() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ bool compare(uint64_t seen, tcaSignalCmp cmp, uint64_t value) {
  switch (cmp) {
    case TCA_CMP_EQ: return seen == value;
    case TCA_CMP_NE: return seen != value;
    case TCA_CMP_GT: return seen > value;
    case TCA_CMP_GE: return seen >= value;
    case TCA_CMP_LT: return seen < value;
    default: return seen <= value;
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
    // Relaxed polls, then one acquire load of the value that satisfied them: that load
    // synchronizes with the sender's release store, ordering the data behind the signal,
    // without the system-wide fence an acquire fence would cost (about a microsecond).
    if (!tca_device_detail::compare(cell.load(cuda::memory_order_relaxed), cmp, value)) continue;
    const uint64_t seen = cell.load(cuda::memory_order_acquire);
    if (tca_device_detail::compare(seen, cmp, value)) return seen;
  }
}

/* ---- puts ---- */
__device__ __forceinline__ void tcaDevicePut(void* dst, const void* src, size_t bytes) {
  tca_device_detail::copy(dst, src, bytes, 0, 1);
}

/* Called by all 32 lanes of a warp with the same arguments. */
__device__ __forceinline__ void tcaDevicePutWarp(void* dst, const void* src, size_t bytes) {
  tca_device_detail::copy(dst, src, bytes, tca_device_detail::lane_in_block() % 32, 32);
  __syncwarp();
}

/* Called by every thread of the block with the same arguments. */
__device__ __forceinline__ void tcaDevicePutBlock(void* dst, const void* src, size_t bytes) {
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  tca_device_detail::copy(dst, src, bytes, tca_device_detail::lane_in_block(), threads);
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
    tcaDeviceSignalOp(signal, value, op);
  }
  __syncwarp();
}

__device__ __forceinline__ void tcaDevicePutSignalBlock(void* dst, const void* src, size_t bytes,
                                                        uint64_t* signal, uint64_t value,
                                                        tcaSignalOp op) {
  tcaDevicePutBlock(dst, src, bytes);
  if (tca_device_detail::lane_in_block() == 0) {
    tcaDeviceFence();  // the other threads' stores, ordered before us by __syncthreads
    tcaDeviceSignalOp(signal, value, op);
  }
  __syncthreads();
}

#endif /* TCA_TCA_DEVICE_CUH */
