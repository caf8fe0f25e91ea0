// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The UCP context (UCX's global state: the transports and memory domains it opened) and one
// worker (the progress engine every endpoint and request of this rank belongs to). RAII,
// move-only: the worker must go before the context it was made from.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tca/tca.h"
#include "transport/ucx/owner.h"

namespace tca::ucx {

class UcpContext {
 public:
  UcpContext() = default;
  // UCX settings (name without the UCX_ prefix, value) applied unless the environment sets them.
  using Defaults = std::vector<std::pair<std::string, std::string>>;
  // Reads UCX's configuration from the environment (UCX_TLS, UCX_NET_DEVICES, ...) over
  // `defaults` and opens the transports that serve `features` (UCP_FEATURE_*).
  static tcaResult create(uint64_t features, const Defaults& defaults, UcpContext* out);

  ucp_context_h get() const { return context_.get(); }
  // The memory types UCX can register and reach here (a mask of UCS_BIT(UCS_MEMORY_TYPE_*)).
  tcaResult memory_types(uint64_t* mask) const;

 private:
  UcxOwner<ucp_context_h, ucp_cleanup> context_;
};

class Worker {
 public:
  Worker() = default;
  // A worker whose calls come from one thread at a time (tca serializes its API).
  static tcaResult create(const UcpContext& context, Worker* out);

  ucp_worker_h get() const { return worker_.get(); }
  // The bytes a peer needs to connect to this worker.
  tcaResult address(std::vector<uint8_t>* out) const;
  // Advances communication; returns how many events it handled.
  unsigned progress() const { return ucp_worker_progress(worker_.get()); }
  // Operations issued after the fence are completed at their targets only after every earlier
  // one (on every endpoint of this worker).
  tcaResult fence() const;

 private:
  UcxOwner<ucp_worker_h, ucp_worker_destroy> worker_;
};

}  // namespace tca::ucx
