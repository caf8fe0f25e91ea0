// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// UCX's non-blocking operations (put, get, flush of an endpoint or of the worker) and their
// completion. Each call returns a Request: complete at once, or a UCX request to poll while the
// worker progresses. Waits run a caller's check now and then (a deadline, a peer's liveness), so
// no wait outlives what the caller allows.
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "tca/tca.h"
#include "transport/ucx/worker.h"

namespace tca::ucx {

// One operation's completion. Move-only; dropping one still in flight hands the request back to
// UCX, which completes it on its own.
class Request {
 public:
  Request() = default;  // complete
  Request(Request&& other) noexcept;
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  // Takes the result of a *_nbx call named `what`; an error result fails here.
  static tcaResult adopt(ucs_status_ptr_t result, const char* what, Request* out);
  // UCS_INPROGRESS, UCS_OK, or the error the operation ended with (polls UCX, no progress).
  ucs_status_t test();
  const char* what() const { return what_; }

 private:
  void release();
  void* request_ = nullptr;
  ucs_status_t status_ = UCS_OK;  // once request_ is null
  const char* what_ = "";
};

// Called between rounds of progress while waiting: TCA_SUCCESS to go on waiting, or the failure
// that ends the wait (and becomes its result).
using WaitCheck = std::function<tcaResult()>;

// Progresses `worker` until `request` completes; fails with the operation's own error, or with
// the failure of `check`.
tcaResult wait(const Worker& worker, Request& request, const WaitCheck& check);
// The same for every request of `requests` (which is cleared on success).
tcaResult wait_all(const Worker& worker, std::vector<Request>& requests, const WaitCheck& check);

// Contiguous `bytes` from `local` (memory of `type`; UCS_MEMORY_TYPE_UNKNOWN: UCX detects it;
// `memh`, if not null, a registration that covers it) to `remote_addr` inside the region of
// `rkey` at the endpoint's peer. Local completion only: the source may be reused, the data is at
// the target after a later flush (or before operations issued after a fence).
tcaResult put(ucp_ep_h ep, const void* local, size_t bytes, ucs_memory_type_t type,
              uint64_t remote_addr, ucp_rkey_h rkey, Request* out, ucp_mem_h memh = nullptr);
// `bytes` from the peer's `remote_addr` into `local`; complete once the data is here.
tcaResult get(ucp_ep_h ep, void* local, size_t bytes, ucs_memory_type_t type, uint64_t remote_addr,
              ucp_rkey_h rkey, Request* out, ucp_mem_h memh = nullptr);
// Complete once every operation issued earlier on `ep` is complete at its target.
tcaResult flush(ucp_ep_h ep, Request* out);
// The same for every endpoint of `worker`.
tcaResult flush(const Worker& worker, Request* out);

}  // namespace tca::ucx
