// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/ucx/worker.h"

#include <cstdlib>
#include <utility>

#include "transport/ucx/status.h"

namespace tca::ucx {

tcaResult result_of(ucs_status_t status) {
  switch (status) {
    case UCS_OK:
      return TCA_SUCCESS;
    case UCS_ERR_NO_MEMORY:
      return TCA_ERROR_OUT_OF_MEMORY;
    case UCS_ERR_NO_RESOURCE:
    case UCS_ERR_EXCEEDS_LIMIT:
      return TCA_ERROR_OUT_OF_RESOURCES;
    case UCS_ERR_UNSUPPORTED:
      return TCA_ERROR_UNSUPPORTED;
    case UCS_ERR_TIMED_OUT:
      return TCA_ERROR_TIMEOUT;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_REJECTED:
      return TCA_ERROR_PEER_FAILED;
    default:
      return TCA_ERROR_TRANSPORT;
  }
}

// ---- UcpContext ----

namespace {

// The libucp in this process must be at least the one tca was compiled against: an older one
// got there first when another UCX was loaded before libtca (LD_LIBRARY_PATH, LD_PRELOAD, or
// Open MPI's UCX components in a program that loads tca later), and its structures differ.
tcaResult check_library_version() {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned release = 0;
  ucp_get_version(&major, &minor, &release);
  if (major == UCP_API_MAJOR && minor >= UCP_API_MINOR) return TCA_SUCCESS;
  TCA_FAIL(TCA_ERROR_TRANSPORT,
           "the UCX library in this process is {}.{}.{} (libucp.so.0 as loaded first), but tca "
           "was built against UCX {}.{}: another UCX was loaded before tca's (LD_LIBRARY_PATH, "
           "LD_PRELOAD, or Open MPI's own UCX components; docs/UCX.md says what to set)",
           major, minor, release, UCP_API_MAJOR, UCP_API_MINOR);
}

}  // namespace

tcaResult UcpContext::create(uint64_t features, const Defaults& defaults, UcpContext* out) {
  TCA_CHECK(check_library_version());
  ucp_config_t* config = nullptr;
  TCA_UCX_CHECK(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  for (const auto& [name, value] : defaults) {
    if (std::getenv(("UCX_" + name).c_str()) != nullptr) continue;  // the user's choice stands
    const ucs_status_t status = ucp_config_modify(config, name.c_str(), value.c_str());
    if (status != UCS_OK) ucp_config_release(config);
    TCA_UCX_CHECK(status, "ucp_config_modify ({}={})", name, value);
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = features;
  UcpContext made;
  const ucs_status_t status = ucp_init(&params, config, made.context_.slot());
  ucp_config_release(config);
  TCA_UCX_CHECK(status, "ucp_init (features {:#x})", features);
  *out = std::move(made);
  return TCA_SUCCESS;
}

tcaResult UcpContext::memory_types(uint64_t* mask) const {
  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  TCA_UCX_CHECK(ucp_context_query(context_.get(), &attr), "ucp_context_query (memory types)");
  *mask = attr.memory_types;
  return TCA_SUCCESS;
}

// ---- Worker ----

tcaResult Worker::create(const UcpContext& context, Worker* out) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  Worker made;
  TCA_UCX_CHECK(ucp_worker_create(context.get(), &params, made.worker_.slot()),
                "ucp_worker_create");
  *out = std::move(made);
  return TCA_SUCCESS;
}

tcaResult Worker::address(std::vector<uint8_t>* out) const {
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
  TCA_UCX_CHECK(ucp_worker_query(worker_.get(), &attr), "ucp_worker_query (address)");
  const auto* bytes = reinterpret_cast<const uint8_t*>(attr.address);
  out->assign(bytes, bytes + attr.address_length);
  ucp_worker_release_address(worker_.get(), attr.address);
  return TCA_SUCCESS;
}

tcaResult Worker::fence() const {
  TCA_UCX_CHECK(ucp_worker_fence(worker_.get()), "ucp_worker_fence");
  return TCA_SUCCESS;
}

}  // namespace tca::ucx
