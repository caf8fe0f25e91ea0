// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "gpu_kernels.h"
#include "tca/tca_device.cuh"

namespace tca_test {
namespace {

__device__ uint8_t round_byte(int rank, uint64_t round, size_t offset) {
  uint64_t x = (static_cast<uint64_t>(rank) << 40) ^ (round << 20) ^ (offset >> 3);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<uint8_t>(x >> (8 * (offset & 7)));
}

__global__ void fill_kernel(uint8_t* data, size_t bytes, int rank, const uint64_t* round) {
  const uint64_t r = *round;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x)
    data[i] = round_byte(rank, r, i);
}

__global__ void check_kernel(const uint8_t* data, size_t bytes, int rank, const uint64_t* round,
                             unsigned long long* mismatches) {
  const uint64_t r = *round;
  unsigned long long wrong = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x)
    wrong += data[i] != round_byte(rank, r, i);
  if (wrong != 0) atomicAdd(mismatches, wrong);
}

__global__ void advance_kernel(uint64_t* round) { ++*round; }

__device__ uint64_t global_ns() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__global__ void hold_kernel(const volatile uint32_t* release, uint64_t* timed_out,
                            uint64_t timeout_ns) {
  const uint64_t start = global_ns();
  while (*release == 0)
    if (global_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
}

template <PutForm kForm>
__global__ void ring_kernel(RingPut ring) {
  for (int round = 1; round <= ring.rounds; ++round) {
    const uint64_t value = ring.add ? 1 : static_cast<uint64_t>(round);
    const tcaSignalOp op = ring.add ? TCA_SIGNAL_ADD : TCA_SIGNAL_SET;
    if (kForm == PutForm::kThread) {
      tcaDevicePutSignal(ring.remote_dst, ring.src, ring.bytes, ring.remote_signal, value, op);
    } else if (kForm == PutForm::kWarp) {
      tcaDevicePutSignalWarp(ring.remote_dst, ring.src, ring.bytes, ring.remote_signal, value, op);
    } else {
      tcaDevicePutSignalBlock(ring.remote_dst, ring.src, ring.bytes, ring.remote_signal, value, op);
    }
    if (threadIdx.x == 0)
      tcaDeviceSignalWaitUntil(ring.own_signal, TCA_CMP_GE, static_cast<uint64_t>(round));
    __syncthreads();
  }
  tcaDeviceQuiet();
}

constexpr uint8_t kPoisonByte = 0xA5;  // tests/test_util.h's kPoison

// The thread form runs in thread 0, the warp form in warp 0, the block form in every thread;
// the rest of the block fills and checks.
template <PutForm kForm>
__global__ void inline_ring_kernel(RingInline ring) {
  uint8_t* src = ring.src + ring.src_offset;
  unsigned long long wrong = 0;
  const bool caller =
      kForm == PutForm::kBlock || (kForm == PutForm::kWarp && threadIdx.x < 32) || threadIdx.x == 0;
  for (int round = 1; round <= ring.rounds; ++round) {
    const uint32_t flag = ring.first_flag + static_cast<uint32_t>(round);
    for (size_t i = threadIdx.x; i < ring.bytes; i += blockDim.x)
      src[i] = round_byte(ring.rank, flag, i);
    if (threadIdx.x == 0)
      tcaDeviceSignalWaitUntil(ring.own_ack, TCA_CMP_GE, ring.ack_base + round - 1);
    __syncthreads();
    if (caller) {
      if (kForm == PutForm::kThread) {
        tcaDeviceInlinePut(ring.remote_mailbox, src, ring.bytes, flag);
        tcaDeviceInlineWait(ring.own_mailbox, ring.dst + ring.dst_offset, ring.bytes, flag);
      } else if (kForm == PutForm::kWarp) {
        tcaDeviceInlinePutWarp(ring.remote_mailbox, src, ring.bytes, flag);
        tcaDeviceInlineWaitWarp(ring.own_mailbox, ring.dst + ring.dst_offset, ring.bytes, flag);
      }
    }
    if (kForm == PutForm::kBlock) {
      tcaDeviceInlinePutBlock(ring.remote_mailbox, src, ring.bytes, flag);
      tcaDeviceInlineWaitBlock(ring.own_mailbox, ring.dst + ring.dst_offset, ring.bytes, flag);
    }
    __syncthreads();
    for (size_t i = threadIdx.x; i < ring.dst_bytes; i += blockDim.x) {
      const bool message = i >= ring.dst_offset && i < ring.dst_offset + ring.bytes;
      const uint8_t expected =
          message ? round_byte(ring.prev, flag, i - ring.dst_offset) : kPoisonByte;
      wrong += ring.dst[i] != expected;
    }
    __syncthreads();
    if (threadIdx.x == 0) tcaDeviceSignalOp(ring.remote_ack, ring.ack_base + round, TCA_SIGNAL_SET);
  }
  if (wrong != 0) atomicAdd(ring.mismatches, wrong);
}

}  // namespace

size_t inline_mailbox_bytes(size_t bytes) { return tcaInlineCells(bytes) * sizeof(uint64_t); }

cudaError_t run_inline_ring(PutForm form, const RingInline& ring, cudaStream_t stream) {
  switch (form) {
    case PutForm::kThread:
      inline_ring_kernel<PutForm::kThread><<<1, 32, 0, stream>>>(ring);
      break;
    case PutForm::kWarp:
      inline_ring_kernel<PutForm::kWarp><<<1, 64, 0, stream>>>(ring);
      break;
    case PutForm::kBlock:
      inline_ring_kernel<PutForm::kBlock><<<1, 256, 0, stream>>>(ring);
      break;
  }
  return cudaGetLastError();
}

cudaError_t fill_round_pattern(void* data, size_t bytes, int rank, const uint64_t* round,
                               cudaStream_t stream) {
  fill_kernel<<<256, 256, 0, stream>>>(static_cast<uint8_t*>(data), bytes, rank, round);
  return cudaGetLastError();
}

cudaError_t count_round_mismatches(const void* data, size_t bytes, int rank, const uint64_t* round,
                                   unsigned long long* mismatches, cudaStream_t stream) {
  check_kernel<<<256, 256, 0, stream>>>(static_cast<const uint8_t*>(data), bytes, rank, round,
                                        mismatches);
  return cudaGetLastError();
}

cudaError_t hold_until_released(const uint32_t* release, uint64_t* timed_out, uint64_t timeout_ns,
                                cudaStream_t stream) {
  hold_kernel<<<1, 1, 0, stream>>>(release, timed_out, timeout_ns);
  return cudaGetLastError();
}

cudaError_t advance_round(uint64_t* round, cudaStream_t stream) {
  advance_kernel<<<1, 1, 0, stream>>>(round);
  return cudaGetLastError();
}

cudaError_t run_device_ring(PutForm form, const RingPut& ring, cudaStream_t stream) {
  switch (form) {
    case PutForm::kThread:
      ring_kernel<PutForm::kThread><<<1, 1, 0, stream>>>(ring);
      break;
    case PutForm::kWarp:
      ring_kernel<PutForm::kWarp><<<1, 32, 0, stream>>>(ring);
      break;
    case PutForm::kBlock:
      ring_kernel<PutForm::kBlock><<<1, 256, 0, stream>>>(ring);
      break;
  }
  return cudaGetLastError();
}

}  // namespace tca_test
