// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "device_pingpong.h"
#include "tca/tca_device.cuh"

namespace tca_tools {
namespace {

// The bare reference polls without the acquire that tcaDeviceSignalWaitUntil adds.
__device__ void wait_for(const PingPong& p, uint64_t value) {
  if (!p.bare_flag) {
    tcaDeviceSignalWaitUntil(p.own_signal, TCA_CMP_GE, value);
    return;
  }
  tca_device_detail::SystemAtomic cell(*p.own_signal);
  while (cell.load(cuda::memory_order_relaxed) < value) {
  }
}

// The initiator's thread 0 stores the global clock into p.clock[slot] (see PingPong::clock).
__device__ __forceinline__ void stamp_clock(const PingPong& p, int slot) {
  if (p.clock == nullptr || !p.initiator || threadIdx.x != 0) return;
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  p.clock[slot] = now;
}

// The forms of a group's call: one thread, one warp, or the whole block.
enum class Form { kThread, kWarp, kBlock };

// Put with signal in the form the block's size names: one thread, a warp (32), or the block.
__device__ __forceinline__ void put_signal(void* dst, const void* src, size_t bytes,
                                           uint64_t* signal, uint64_t value) {
  if (blockDim.x == 1) {
    tcaDevicePutSignal(dst, src, bytes, signal, value, TCA_SIGNAL_SET);
  } else if (blockDim.x == 32) {
    tcaDevicePutSignalWarp(dst, src, bytes, signal, value, TCA_SIGNAL_SET);
  } else {
    tcaDevicePutSignalBlock(dst, src, bytes, signal, value, TCA_SIGNAL_SET);
  }
}

template <Form kForm>
__device__ __forceinline__ void put_signal_as(const PingPong& p, uint64_t value) {
  if (kForm == Form::kThread) {
    tcaDevicePutSignal(p.remote_dst, p.local_src, p.bytes, p.remote_signal, value, TCA_SIGNAL_SET);
  } else if (kForm == Form::kWarp) {
    tcaDevicePutSignalWarp(p.remote_dst, p.local_src, p.bytes, p.remote_signal, value,
                           TCA_SIGNAL_SET);
  } else {
    tcaDevicePutSignalBlock(p.remote_dst, p.local_src, p.bytes, p.remote_signal, value,
                            TCA_SIGNAL_SET);
  }
}

// One thread waits; with more, the group learns of the arrival before any of them puts again.
template <Form kForm>
__device__ void receive(const PingPong& p, uint64_t value) {
  if (threadIdx.x == 0) wait_for(p, value);
  if (kForm != Form::kThread) __syncthreads();
}

// One round trip: one barrier a message outside the put's own, after the wait (as NVSHMEM's
// perftest does), so the forms compare call for call.
template <Form kForm>
__device__ __forceinline__ void round_trip(const PingPong& p, int round) {
  const uint64_t value = p.first_value + static_cast<uint64_t>(round);
  if (!p.initiator) receive<kForm>(p, value);
  if (p.bare_flag) {
    if (threadIdx.x == 0)
      tca_device_detail::SystemAtomic(*p.remote_signal).store(value, cuda::memory_order_relaxed);
  } else {
    put_signal_as<kForm>(p, value);
  }
  if (p.initiator) receive<kForm>(p, value);
}

// A kernel per form, as NVSHMEM's perftest has: the thread form's loop carries none of the
// block form's code, nor the block form's registers the others'. The first round trip apart, so
// that the timed loop carries no test for it (one cost the block form 0.03 us a message on an
// H200 pair).
template <Form kForm>
__global__ void pingpong_kernel(PingPong p) {
  if (p.rounds < 1) return;
  round_trip<kForm>(p, 1);
  stamp_clock(p, 0);
  for (int round = 2; round <= p.rounds; ++round) round_trip<kForm>(p, round);
  stamp_clock(p, 1);
}

void launch_put_signal_pingpong(const PingPong& p, cudaStream_t stream) {
  if (p.threads == 1) {
    pingpong_kernel<Form::kThread><<<1, 1, 0, stream>>>(p);
  } else if (p.threads == 32) {
    pingpong_kernel<Form::kWarp><<<1, 32, 0, stream>>>(p);
  } else {
    pingpong_kernel<Form::kBlock><<<1, p.threads, 0, stream>>>(p);
  }
}

// The inline forms: one thread, one warp, or the whole block. A kernel per form keeps the
// thread form's loop free of the others' code, and the thread form's sizes of one and two cells
// are known at compile time (kBytes; 0: p.bytes), as in a kernel that sends one fixed-size
// message. Each measured faster than a kernel of all forms and run-time sizes (4 B one way:
// 0.80 us against 1.19 on an H200 pair, docs/PERFORMANCE_HISTORY.md).

template <size_t kBytes>
__device__ __forceinline__ size_t message_bytes(const PingPong& p) {
  return kBytes != 0 ? kBytes : p.bytes;
}

template <Form kForm, size_t kBytes>
__device__ void inline_put(const PingPong& p, uint32_t flag) {
  auto* mailbox = static_cast<uint64_t*>(p.remote_dst);
  const size_t bytes = message_bytes<kBytes>(p);
  if (kForm == Form::kThread) {
    tcaDeviceInlinePut(mailbox, p.local_src, bytes, flag);
  } else if (kForm == Form::kWarp) {
    tcaDeviceInlinePutWarp(mailbox, p.local_src, bytes, flag);
  } else {
    tcaDeviceInlinePutBlock(mailbox, p.local_src, bytes, flag);
  }
}

template <Form kForm, size_t kBytes>
__device__ void inline_wait(const PingPong& p, uint32_t flag) {
  const size_t bytes = message_bytes<kBytes>(p);
  if (kForm == Form::kThread) {
    tcaDeviceInlineWait(p.own_mailbox, p.local_dst, bytes, flag);
  } else if (kForm == Form::kWarp) {
    tcaDeviceInlineWaitWarp(p.own_mailbox, p.local_dst, bytes, flag);
  } else {
    tcaDeviceInlineWaitBlock(p.own_mailbox, p.local_dst, bytes, flag);
  }
}

// Each message may go only once the peer's wait for the previous one has returned: in a
// ping-pong the answer says so.
template <Form kForm, size_t kBytes>
__device__ __forceinline__ void inline_round_trip(const PingPong& p, int round) {
  const auto flag = static_cast<uint32_t>(p.first_value + static_cast<uint64_t>(round));
  if (!p.initiator) inline_wait<kForm, kBytes>(p, flag);
  inline_put<kForm, kBytes>(p, flag);
  if (p.initiator) inline_wait<kForm, kBytes>(p, flag);
}

template <Form kForm, size_t kBytes = 0>
__global__ void inline_pingpong_kernel(PingPong p) {
  if (p.rounds < 1) return;
  inline_round_trip<kForm, kBytes>(p, 1);
  stamp_clock(p, 0);
  for (int round = 2; round <= p.rounds; ++round) inline_round_trip<kForm, kBytes>(p, round);
  stamp_clock(p, 1);
}

void launch_inline_pingpong(const PingPong& p, cudaStream_t stream) {
  if (p.threads == 1 && p.bytes == 4) {
    inline_pingpong_kernel<Form::kThread, 4><<<1, 1, 0, stream>>>(p);
  } else if (p.threads == 1 && p.bytes == 8) {
    inline_pingpong_kernel<Form::kThread, 8><<<1, 1, 0, stream>>>(p);
  } else if (p.threads == 1) {
    inline_pingpong_kernel<Form::kThread><<<1, 1, 0, stream>>>(p);
  } else if (p.threads == 32) {
    inline_pingpong_kernel<Form::kWarp><<<1, 32, 0, stream>>>(p);
  } else {
    inline_pingpong_kernel<Form::kBlock><<<1, p.threads, 0, stream>>>(p);
  }
}

__global__ void inline_put_kernel(uint64_t* remote_mailbox, const void* local_src, size_t bytes,
                                  uint32_t flag) {
  tcaDeviceInlinePutBlock(remote_mailbox, local_src, bytes, flag);
}

__global__ void inline_wait_kernel(const uint64_t* own_mailbox, void* local_dst, size_t bytes,
                                   uint32_t flag) {
  tcaDeviceInlineWaitBlock(own_mailbox, local_dst, bytes, flag);
}

__global__ void put_signal_kernel(void* remote_dst, const void* local_src, size_t bytes,
                                  uint64_t* remote_signal, uint64_t value) {
  put_signal(remote_dst, local_src, bytes, remote_signal, value);
}

__global__ void signal_wait_kernel(const uint64_t* signal, uint64_t value) {
  tcaDeviceSignalWaitUntil(signal, TCA_CMP_GE, value);
}

}  // namespace

cudaError_t launch_device_put_signal(void* remote_dst, const void* local_src, size_t bytes,
                                     uint64_t* remote_signal, uint64_t value, unsigned threads,
                                     cudaStream_t stream) {
  put_signal_kernel<<<1, threads, 0, stream>>>(remote_dst, local_src, bytes, remote_signal, value);
  return cudaGetLastError();
}

cudaError_t launch_device_signal_wait(const uint64_t* signal, uint64_t value, cudaStream_t stream) {
  signal_wait_kernel<<<1, 1, 0, stream>>>(signal, value);
  return cudaGetLastError();
}

size_t inline_mailbox_bytes(size_t bytes) { return tcaInlineCells(bytes) * sizeof(uint64_t); }

cudaError_t launch_device_inline_put(uint64_t* remote_mailbox, const void* local_src, size_t bytes,
                                     uint32_t flag, cudaStream_t stream) {
  inline_put_kernel<<<1, 256, 0, stream>>>(remote_mailbox, local_src, bytes, flag);
  return cudaGetLastError();
}

cudaError_t launch_device_inline_wait(const uint64_t* own_mailbox, void* local_dst, size_t bytes,
                                      uint32_t flag, cudaStream_t stream) {
  inline_wait_kernel<<<1, 256, 0, stream>>>(own_mailbox, local_dst, bytes, flag);
  return cudaGetLastError();
}

cudaError_t launch_device_pingpong(const PingPong& pingpong, cudaStream_t stream) {
  if (pingpong.inline_message) {
    launch_inline_pingpong(pingpong, stream);
  } else {
    launch_put_signal_pingpong(pingpong, stream);
  }
  return cudaGetLastError();
}

}  // namespace tca_tools
