// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// What the GPU API (tca_cuda.h) asks of the transport: signal cells and stream-ordered
// notification waits.
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

tcaResult CudaTransportImpl::signal_address(int rank, int index, uint64_t** out) const {
  TCA_CHECK(require_device());
  if (index < 0 || index >= TCA_DEVICE_SIGNALS)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "signal index {} outside [0, {})", index,
             TCA_DEVICE_SIGNALS);
  if (peers_[rank].signals == nullptr)
    TCA_FAIL(TCA_ERROR_UNREACHABLE,
             "rank {}'s signal cells are not reachable from rank {}'s "
             "GPU",
             rank, job_.rank());
  *out = peers_[rank].signals + index;
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::enqueue_notification_wait(int src_rank, int slot,
                                                       cudaStream_t stream) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  TCA_CHECK(check_stream_waits());
  const auto* cell = reinterpret_cast<const uint64_t*>(peers_[job_.rank()].control_device +
                                                       notify_cell_offset(src_rank, slot));
  auto* consumed = reinterpret_cast<uint64_t*>(
      device_address_of_counter(job_.notify_consumed_counter(src_rank, slot)));
  const uint64_t timeout_ns = static_cast<uint64_t>(job_.timeout_ms()) * 1000000;
  TCA_CUDA_CHECK(
      launch_notification_wait(cell, consumed, timeout_ns, stream_wait_timed_out_device_, stream));
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::check_stream_waits() {
  if (!stream_wait_timed_out_) return TCA_SUCCESS;
  auto* flag = reinterpret_cast<std::atomic<unsigned int>*>(stream_wait_timed_out_.get());
  if (flag->exchange(0, std::memory_order_acq_rel) != 0)
    TCA_FAIL(TCA_ERROR_TIMEOUT,
             "a stream-ordered wait for a notification outlived {} ms and "
             "released its stream",
             job_.timeout_ms());
  return TCA_SUCCESS;
}

}  // namespace tca
