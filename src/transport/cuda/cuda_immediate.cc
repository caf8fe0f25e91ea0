// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Immediate transfers on the GPU (tcaPut, tcaGet): one copy on the DMA stream, waited for, with
// nothing allocated, pinned or built for the call. A chain of one would make device tables or a
// graph and free them afterwards, and cudaFree waits for every kernel of the device, those of
// the program's other streams too; the caller's host memory would be pinned for one use. Here
// CUDA stages pageable memory itself and the copy engines carry the bytes, except for large puts
// from pageable memory into GPU memory, whose source is pinned for the call.
#include <algorithm>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "transport/cuda/cuda_transport_impl.h"

namespace tca {
namespace {

// From this size a put from the caller's pageable host memory into GPU memory pins the source
// for the call: on an H200, CUDA's staging moved 7.6-8.5 GB/s at 256 MiB and the pinning with
// the copy about 10, while at 1 MiB the staging took a third of the time (docs/PERFORMANCE.md).
// Copies into pageable memory are staged at every size (faster than pinning at every size).
constexpr uint64_t kPinnedPutFrom = uint64_t{32} << 20;

}  // namespace

tcaResult CudaTransportImpl::immediate_address(PeerRegion& end,
                                               std::vector<HostRegistration>* pinned,
                                               unsigned char** out) {
  if (end.owner == job_.rank() && end.id == 0) {  // the caller's own buffer, of either kind
    if (pinned != nullptr && end.kind == TCA_MEM_CPU)
      return host_device_address(end, pinned, out);  // pinned already, or for this call
    *out = reinterpret_cast<unsigned char*>(end.address);
    return TCA_SUCCESS;
  }
  std::vector<HostRegistration> none;  // registered regions keep their pinning
  return end_address(end, &none, out);
}

tcaResult CudaTransportImpl::check_ends_alive(const Transfer& transfer) const {
  for (const PeerRegion* end : {transfer.dst, transfer.src})
    if (end->id != 0 && live_cell(*end)->load(std::memory_order_acquire) != end->id)
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} was freed; nothing was written",
               end->id, end->owner);
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::copy_now(const Transfer& transfer, unsigned char* dst,
                                      const unsigned char* src) {
  TCA_CHECK(check_ends_alive(transfer));
  TCA_CHECK(check_stream_waits());
  if (resident_ && resident_->busy()) TCA_CHECK(resident_->wait_all());  // kicks keep their order
  stream_kicks_pending_ = true;
  TCA_CUDA_CHECK(cudaMemcpyAsync(dst, src, transfer.width, cudaMemcpyDefault, dma_stream()));
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::run_now(const Transfer& transfer) {
  if (transfer.count != 1 || (transfer.flags & TCA_FLAG_NOTIFY) != 0)
    return Transport::run_now(transfer);
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  if (!reaches(transfer.peer))
    TCA_FAIL(TCA_ERROR_UNREACHABLE,
             "rank {} cannot reach rank {} through CUDA (another host, no GPU on one side, or "
             "no peer access)",
             job_.rank(), transfer.peer);
  unsigned char* dst = nullptr;
  unsigned char* src = nullptr;
  std::vector<HostRegistration> pinned;  // a large pageable source, for this call
  const bool pin_source = transfer.src->kind == TCA_MEM_CPU && transfer.dst->kind == TCA_MEM_GPU &&
                          transfer.width >= kPinnedPutFrom;
  TCA_CHECK(immediate_address(*transfer.dst, nullptr, &dst));
  TCA_CHECK(immediate_address(*transfer.src, pin_source ? &pinned : nullptr, &src));
  std::vector<int> owners;  // other ranks whose memory the copy touches
  for (const PeerRegion* end : {transfer.dst, transfer.src})
    if (end->owner != job_.rank() &&
        std::find(owners.begin(), owners.end(), end->owner) == owners.end())
      owners.push_back(end->owner);
  announce_kick(owners);  // before the liveness check (base/region.h)
  const tcaResult copied = copy_now(transfer, dst + transfer.dst_offset, src + transfer.src_offset);
  if (copied != TCA_SUCCESS) {
    const ErrorKeeper keep;  // the copy's error stands; the announcement is withdrawn after
    publish_completed_kicks(true);
    return copied;
  }
  return wait_host_kicks();
}

}  // namespace tca
