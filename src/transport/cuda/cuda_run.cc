// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A chain prepared for the GPU engines: host kicks, waits and stream-ordered kicks.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "tca/tca_cuda.h"
#include "transport/cuda/cuda_transport_impl.h"
#include "transport/job.h"

namespace tca {

CudaRun::CudaRun(CudaTransportImpl& transport, std::unique_ptr<GpuChain> chain,
                 std::vector<LivenessCheck> checks, std::vector<HostRegistration> pinned,
                 std::vector<NotifyKey> notifies)
    : transport_(transport),
      chain_(std::move(chain)),
      checks_(std::move(checks)),
      pinned_(std::move(pinned)),
      notifies_(std::move(notifies)) {
  const int me = transport_.job().rank();
  for (const LivenessCheck& check : checks_)
    if (check.owner != me &&
        std::find(owners_.begin(), owners_.end(), check.owner) == owners_.end())
      owners_.push_back(check.owner);
}

tcaResult CudaRun::check_alive() const {
  for (const LivenessCheck& check : checks_)
    if (check.cell->load(std::memory_order_acquire) != check.id)
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} was freed; nothing was written",
               check.id, check.owner);
  return TCA_SUCCESS;
}

CudaRun::~CudaRun() { transport_.stop_resident(); }  // the chain's memory is freed next

tcaResult CudaRun::start() {
  transport_.announce_kick(owners_);
  if (const tcaResult ready = ready_to_launch(); ready != TCA_SUCCESS) {
    // Nothing was kicked: once the kicks before it are done, so is this one (its error stands).
    const ErrorKeeper keep;
    transport_.publish_completed_kicks(true);
    return append_frame(ready, __FILE__, __LINE__);
  }
  if (chain_->host_counted()) {
    // The host counts, so the GPU only publishes: no read of the sequence over PCIe.
    values_.clear();
    for (const NotifyKey& key : notifies_)
      values_.push_back(transport_.job().next_notify_value(key.receiver, key.slot));
    TCA_CHECK(transport_.host_kick(*chain_, &values_));
  } else {
    TCA_CHECK(transport_.host_kick(*chain_, nullptr));
  }
  kicked_ = true;
  return TCA_SUCCESS;
}

tcaResult CudaRun::wait() {
  if (kicked_) TCA_CHECK(transport_.wait_host_kicks());
  return TCA_SUCCESS;
}

tcaResult CudaRun::ready_to_launch() const {
  TCA_CHECK(check_alive());
  TCA_CHECK(transport_.check_stream_waits());
  return transport_.use_device();
}

tcaResult CudaRun::enqueue(cudaStream_t stream) {
  TCA_CHECK(ready_to_launch());
  return chain_->enqueue(stream);
}

}  // namespace tca
