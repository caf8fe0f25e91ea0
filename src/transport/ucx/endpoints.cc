// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/ucx/endpoints.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include "base/log.h"
#include "transport/ucx/status.h"

namespace tca::ucx {

namespace {

// How long a forced close may progress before its endpoints are left to the worker's end.
constexpr auto kForceCloseLimit = std::chrono::seconds(2);

}  // namespace

tcaResult barrier_with_progress(Bootstrap& bootstrap, const Worker& worker) {
  // The worker is used by one thread at a time: the helper alone while this thread is inside
  // the barrier (thread start and join order the two).
  std::atomic<bool> done{false};
  std::thread helper([&] {
    while (!done.load(std::memory_order_acquire))
      if (worker.progress() == 0) std::this_thread::yield();
  });
  const tcaResult result = bootstrap.barrier();
  done.store(true, std::memory_order_release);
  helper.join();
  TCA_CHECK(result);
  return TCA_SUCCESS;
}

tcaResult allgather_bytes(Bootstrap& bootstrap, const std::vector<uint8_t>& mine,
                          std::vector<std::vector<uint8_t>>* all) {
  const uint64_t my_size = mine.size();
  std::vector<uint64_t> sizes(static_cast<size_t>(bootstrap.size()));
  TCA_CHECK(bootstrap.allgather(&my_size, sizes.data(), sizeof my_size));
  const size_t stride = static_cast<size_t>(*std::max_element(sizes.begin(), sizes.end()));
  std::vector<uint8_t> padded = mine;
  padded.resize(stride, 0);
  std::vector<uint8_t> gathered(stride * sizes.size(), 0);
  TCA_CHECK(bootstrap.allgather(padded.data(), gathered.data(), stride));
  all->resize(sizes.size());
  for (size_t rank = 0; rank < sizes.size(); ++rank) {
    const uint8_t* begin = gathered.data() + rank * stride;
    (*all)[rank].assign(begin, begin + sizes[rank]);
  }
  return TCA_SUCCESS;
}

tcaResult Endpoints::connect(const Worker& worker, Bootstrap& bootstrap, Endpoints* out) {
  std::vector<uint8_t> mine;
  TCA_CHECK(worker.address(&mine));
  Endpoints made;
  TCA_CHECK(allgather_bytes(bootstrap, mine, &made.addresses_));
  made.worker_ = &worker;
  const size_t ranks = made.addresses_.size();
  made.peers_ = std::make_unique<Peer[]>(ranks);
  made.endpoints_.assign(ranks, nullptr);
  *out = std::move(made);
  return TCA_SUCCESS;
}

tcaResult Endpoints::reach(int rank) {
  if (rank < 0 || rank >= size())
    TCA_FAIL(TCA_ERROR_INTERNAL, "no endpoint to rank {} of {}", rank, size());
  if (endpoints_[static_cast<size_t>(rank)] != nullptr) return TCA_SUCCESS;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(addresses_[rank].data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = &Endpoints::on_error;
  params.err_handler.arg = &peers_[static_cast<size_t>(rank)];
  ucp_ep_h ep = nullptr;
  TCA_UCX_CHECK(ucp_ep_create(worker_->get(), &params, &ep), "ucp_ep_create (to rank {})", rank);
  endpoints_[static_cast<size_t>(rank)] = ep;
  return TCA_SUCCESS;
}

void Endpoints::on_error(void* peer, ucp_ep_h /*ep*/, ucs_status_t status) {
  static_cast<Peer*>(peer)->status.store(status, std::memory_order_relaxed);
  TCA_INFO("ucx: an endpoint failed: {}", ucs_status_string(status));
}

Endpoints& Endpoints::operator=(Endpoints&& other) noexcept {
  if (this != &other) {
    force_close();
    worker_ = std::exchange(other.worker_, nullptr);
    addresses_ = std::move(other.addresses_);
    endpoints_ = std::move(other.endpoints_);
    peers_ = std::move(other.peers_);
  }
  return *this;
}

Endpoints::~Endpoints() { force_close(); }

void Endpoints::force_close() {
  const ErrorKeeper keep;  // a clean-up failure must not replace the error being reported
  std::vector<Request> closing;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  for (ucp_ep_h ep : endpoints_) {
    if (ep == nullptr) continue;  // never reached
    Request request;
    if (Request::adopt(ucp_ep_close_nbx(ep, &param), "ucp_ep_close_nbx", &request) == TCA_SUCCESS)
      closing.push_back(std::move(request));
  }
  endpoints_.clear();
  const auto limit = std::chrono::steady_clock::now() + kForceCloseLimit;
  for (Request& request : closing)
    while (request.test() == UCS_INPROGRESS && std::chrono::steady_clock::now() < limit)
      worker_->progress();
}

tcaResult Endpoints::close(Bootstrap& bootstrap, const WaitCheck& check) {
  Request flushed;
  TCA_CHECK(flush(*worker_, &flushed));
  TCA_CHECK(wait(*worker_, flushed, check));
  // No rank closes while a peer may still reach it.
  TCA_CHECK(barrier_with_progress(bootstrap, *worker_));
  force_close();
  TCA_CHECK(bootstrap.barrier());
  return TCA_SUCCESS;
}

}  // namespace tca::ucx
