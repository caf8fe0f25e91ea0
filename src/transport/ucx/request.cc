// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/ucx/request.h"

#include <utility>

#include "transport/ucx/status.h"

namespace tca::ucx {

namespace {

// Rounds of progress between two runs of a wait's check.
constexpr int kProgressRoundsPerCheck = 64;

ucp_request_param_t memory_param(ucs_memory_type_t type, ucp_mem_h memh) {
  ucp_request_param_t param{};
  if (type != UCS_MEMORY_TYPE_UNKNOWN) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    param.memory_type = type;
  }
  if (memh != nullptr) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
  }
  return param;
}

}  // namespace

// ---- Request ----

Request::Request(Request&& other) noexcept
    : request_(std::exchange(other.request_, nullptr)),
      status_(other.status_),
      what_(other.what_) {}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    release();
    request_ = std::exchange(other.request_, nullptr);
    status_ = other.status_;
    what_ = other.what_;
  }
  return *this;
}

Request::~Request() { release(); }

void Request::release() {
  if (request_ != nullptr) ucp_request_free(std::exchange(request_, nullptr));
}

tcaResult Request::adopt(ucs_status_ptr_t result, const char* what, Request* out) {
  if (UCS_PTR_IS_ERR(result)) TCA_UCX_CHECK(UCS_PTR_STATUS(result), "{}", what);
  Request made;
  made.what_ = what;
  made.request_ = UCS_PTR_IS_PTR(result) ? result : nullptr;
  *out = std::move(made);
  return TCA_SUCCESS;
}

ucs_status_t Request::test() {
  if (request_ == nullptr) return status_;
  const ucs_status_t status = ucp_request_check_status(request_);
  if (status == UCS_INPROGRESS) return status;
  ucp_request_free(std::exchange(request_, nullptr));
  status_ = status;
  return status;
}

// ---- waits ----

tcaResult wait(const Worker& worker, Request& request, const WaitCheck& check) {
  for (int round = 1;; ++round) {
    const ucs_status_t status = request.test();
    if (status != UCS_INPROGRESS) {
      TCA_UCX_CHECK(status, "{} (completion)", request.what());
      return TCA_SUCCESS;
    }
    worker.progress();
    if (round % kProgressRoundsPerCheck == 0 && check) TCA_CHECK(check());
  }
}

tcaResult wait_all(const Worker& worker, std::vector<Request>& requests, const WaitCheck& check) {
  for (Request& request : requests) TCA_CHECK(wait(worker, request, check));
  requests.clear();
  return TCA_SUCCESS;
}

// ---- operations ----

tcaResult put(ucp_ep_h ep, const void* local, size_t bytes, ucs_memory_type_t type,
              uint64_t remote_addr, ucp_rkey_h rkey, Request* out, ucp_mem_h memh) {
  const ucp_request_param_t param = memory_param(type, memh);
  TCA_CHECK(
      Request::adopt(ucp_put_nbx(ep, local, bytes, remote_addr, rkey, &param), "ucp_put_nbx", out));
  return TCA_SUCCESS;
}

tcaResult get(ucp_ep_h ep, void* local, size_t bytes, ucs_memory_type_t type, uint64_t remote_addr,
              ucp_rkey_h rkey, Request* out, ucp_mem_h memh) {
  const ucp_request_param_t param = memory_param(type, memh);
  TCA_CHECK(
      Request::adopt(ucp_get_nbx(ep, local, bytes, remote_addr, rkey, &param), "ucp_get_nbx", out));
  return TCA_SUCCESS;
}

tcaResult flush(ucp_ep_h ep, Request* out) {
  const ucp_request_param_t param{};
  TCA_CHECK(Request::adopt(ucp_ep_flush_nbx(ep, &param), "ucp_ep_flush_nbx", out));
  return TCA_SUCCESS;
}

tcaResult flush(const Worker& worker, Request* out) {
  const ucp_request_param_t param{};
  TCA_CHECK(
      Request::adopt(ucp_worker_flush_nbx(worker.get(), &param), "ucp_worker_flush_nbx", out));
  return TCA_SUCCESS;
}

}  // namespace tca::ucx
