// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/cuda/resident.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace tca {
namespace {

constexpr uint64_t kSequenceBits = ~uint64_t{0} >> kResidentSequenceShift;
constexpr int kSpinsBeforeYield = 4096;

}  // namespace

tcaResult ResidentServer::make(uint64_t idle_ns, std::unique_ptr<ResidentServer>* out) {
  std::unique_ptr<ResidentServer> server(new ResidentServer(idle_ns));
  void* ring = nullptr;
  TCA_CUDA_CHECK(cudaHostAlloc(&ring, sizeof(ResidentRing), cudaHostAllocMapped));
  server->ring_ = PinnedHostMemory(ring);
  std::memset(ring, 0, sizeof(ResidentRing));
  TCA_CUDA_CHECK(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&server->ring_device_), ring, 0));
  // Not blocking: the kernel must not hold up, nor wait for, the legacy default stream.
  TCA_CHECK(make_stream(cudaStreamNonBlocking, &server->stream_));
  cudaEvent_t ended = nullptr;
  TCA_CUDA_CHECK(cudaEventCreateWithFlags(&ended, cudaEventDisableTiming));
  server->ended_ = CudaEvent(ended);
  *out = std::move(server);
  return TCA_SUCCESS;
}

ResidentServer::~ResidentServer() {
  if (stop() != TCA_SUCCESS) clear_last_error();
}

tcaResult ResidentServer::kick(const SmCopyParams* phases, const uint64_t* values, uint32_t count) {
  TCA_CHECK(write_slot(phases, values, count));
  ++kicked_;
  return make_sure_served();
}

bool ResidentServer::carries_address(uintptr_t address) {
  return address <= kResidentPayloadMask && (address & kResidentCountMask) == 0;
}

bool ResidentServer::carries(const uint64_t* values, uint32_t count) {
  return count <= kInlineNotifyValues && std::all_of(values, values + count, [](uint64_t value) {
           return value <= kResidentPayloadMask;
         });
}

tcaResult ResidentServer::write_slot(const SmCopyParams* phases, const uint64_t* values,
                                     uint32_t count) {
  const auto address = reinterpret_cast<uintptr_t>(phases);
  if (!carries(values, count) || !carries_address(address))
    TCA_FAIL(TCA_ERROR_TRANSPORT,
             "a resident kick carries at most {} values and a 16-byte aligned address of 48 "
             "bits (got {} values and {:#x})",
             kInlineNotifyValues, count, address);
  if (kicked_ + 1 - completed() > kResidentSlots) TCA_CHECK(wait_all());  // the ring is full
  volatile ResidentSlot& slot = ring()->slots[kicked_ % kResidentSlots];
  const uint64_t stamp = ((kicked_ + 1) & kSequenceBits) << kResidentSequenceShift;
  // The first value is read with the tag, so it is always written.
  for (uint32_t i = 0; i < std::max(count, 1u); ++i)
    slot.values[i] = stamp | (i < count ? values[i] : 0);
  // Whatever the application wrote before the kick (the source) before the tag, which the
  // kernel's acquire follows.
  std::atomic_thread_fence(std::memory_order_release);
  slot.tag = stamp | address | count;
  return TCA_SUCCESS;
}

tcaResult ResidentServer::make_sure_served() {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the slot before the look at leaving
  for (int looks = 0; !launched_ || ring()->leaving != 0; ++looks) {
    const cudaError_t state = launched_ ? cudaEventQuery(ended_.get()) : cudaSuccess;
    if (state == cudaErrorNotReady) {
      if (looks > kSpinsBeforeYield) sched_yield();
      continue;
    }
    TCA_CUDA_CHECK(state);
    ring()->leaving = 0;
    TCA_CUDA_CHECK(launch_resident_server(ring_device_, completed(), idle_ns_, stream_.get()));
    TCA_CUDA_CHECK(cudaEventRecord(ended_.get(), stream_.get()));
    launched_ = true;
    break;
  }
  return TCA_SUCCESS;
}

tcaResult ResidentServer::wait_all() {
  for (int polls = 0; completed() < kicked_; ++polls) {
    if (polls % 64 != 63) continue;  // no CUDA call while the kick is most likely just ending
    const cudaError_t state = cudaEventQuery(ended_.get());
    if (state == cudaErrorNotReady) {
      if (polls > kSpinsBeforeYield) sched_yield();
      continue;
    }
    TCA_CUDA_CHECK(state);
    if (completed() < kicked_)  // it ends only after serving every kick written before
      TCA_FAIL(TCA_ERROR_TRANSPORT, "the resident kernel ended after {} of {} kicks", completed(),
               kicked_);
  }
  return TCA_SUCCESS;
}

tcaResult ResidentServer::stop() {
  if (!launched_) return TCA_SUCCESS;
  const cudaError_t state = cudaEventQuery(ended_.get());
  if (state == cudaErrorNotReady) TCA_CHECK(write_slot(nullptr, nullptr, 0));  // after the kicks
  launched_ = false;
  TCA_CUDA_CHECK(cudaEventSynchronize(ended_.get()));
  return TCA_SUCCESS;
}

}  // namespace tca
