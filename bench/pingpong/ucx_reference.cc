// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "ucx_reference.h"

#include <chrono>
#include <cstring>
#include <utility>

#include "tca_harness/check.h"
#include "tca_harness/ranks.h"

namespace tca_bench {

namespace {

using tca_harness::die;

void ucx_check(ucs_status_t status, const char* call) {
  if (status != UCS_OK) die(std::string(call) + ": " + ucs_status_string(status));
}

// Progresses `worker` until `request` (an *_nbx result) completes.
void complete(ucp_worker_h worker, ucs_status_ptr_t request, const char* call) {
  if (UCS_PTR_IS_ERR(request)) ucx_check(UCS_PTR_STATUS(request), call);
  if (request == nullptr) return;
  ucs_status_t status;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS)
    ucp_worker_progress(worker);
  ucp_request_free(request);
  ucx_check(status, call);
}

ucs_memory_type_t memory_type(bool gpu) {
  return gpu ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
}

// Each rank's `mine` to the peer, whatever their sizes.
std::vector<uint8_t> swap_bytes(const std::vector<uint8_t>& mine, int peer) {
  return tca_harness::allgather_bytes(mine, tca_harness::tca_control())[static_cast<size_t>(peer)];
}

void on_endpoint_error(void* failed, ucp_ep_h /*ep*/, ucs_status_t status) {
  *static_cast<ucs_status_t*>(failed) = status;
}

// The peer's end of one registered buffer.
struct RemoteBuffer {
  uint64_t address = 0;
  ucp_rkey_h rkey = nullptr;
};

}  // namespace

struct UcxReference::State {
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  ucp_ep_h ep = nullptr;
  std::vector<UcxBuffer> buffers;
  std::vector<ucp_mem_h> memhs;      // buffers, then the flag word
  std::vector<RemoteBuffer> remote;  // the peer's buffers, then its flag word
  alignas(64) uint64_t flag = 0;     // raised by the peer
  uint64_t flag_out = 0;             // the count this rank put last
  uint64_t expected = 0;             // the count the next wait waits for
  ucs_status_t failed = UCS_OK;      // what UCX reported when the endpoint failed

  ~State();
  ucs_status_t init();
  ucs_status_t connect(int peer);
  ucs_status_t register_memory(int peer);
};

UcxReference::State::~State() {
  for (RemoteBuffer& buffer : remote)
    if (buffer.rkey != nullptr) ucp_rkey_destroy(buffer.rkey);
  if (ep != nullptr) {
    // Every message was consumed before this (the driver's barriers); nothing is left to flush.
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &param);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    if (UCS_PTR_IS_PTR(request)) {
      while (ucp_request_check_status(request) == UCS_INPROGRESS &&
             std::chrono::steady_clock::now() < limit)
        ucp_worker_progress(worker);
      ucp_request_free(request);
    }
  }
  for (ucp_mem_h memh : memhs) ucp_mem_unmap(context, memh);
  if (worker != nullptr) ucp_worker_destroy(worker);
  if (context != nullptr) ucp_cleanup(context);
}

ucs_status_t UcxReference::State::init() {
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) return status;
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_RMA;
  status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) return status;
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  return ucp_worker_create(context, &worker_params, &worker);
}

ucs_status_t UcxReference::State::connect(int peer) {
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
  ucs_status_t status = ucp_worker_query(worker, &attr);
  if (status != UCS_OK) return status;
  const auto* bytes = reinterpret_cast<const uint8_t*>(attr.address);
  const std::vector<uint8_t> mine(bytes, bytes + attr.address_length);
  ucp_worker_release_address(worker, attr.address);
  const std::vector<uint8_t> theirs = swap_bytes(mine, peer);
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(theirs.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = on_endpoint_error;
  params.err_handler.arg = &failed;
  return ucp_ep_create(worker, &params, &ep);
}

ucs_status_t UcxReference::State::register_memory(int peer) {
  std::vector<UcxBuffer> all = buffers;
  all.push_back({&flag, sizeof flag, false});
  for (const UcxBuffer& buffer : all) {
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                        UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    params.address = buffer.address;
    params.length = buffer.bytes;
    params.memory_type = memory_type(buffer.gpu);
    ucp_mem_h memh = nullptr;
    ucs_status_t status = ucp_mem_map(context, &params, &memh);
    if (status != UCS_OK) return status;
    memhs.push_back(memh);
    void* packed = nullptr;
    size_t packed_size = 0;
    status = ucp_rkey_pack(context, memh, &packed, &packed_size);
    if (status != UCS_OK) return status;
    std::vector<uint8_t> mine(packed_size + sizeof(uint64_t));
    const uint64_t address = reinterpret_cast<uintptr_t>(buffer.address);
    std::memcpy(mine.data(), &address, sizeof address);
    std::memcpy(mine.data() + sizeof address, packed, packed_size);
    ucp_rkey_buffer_release(packed);
    const std::vector<uint8_t> theirs = swap_bytes(mine, peer);
    RemoteBuffer remote_buffer;
    std::memcpy(&remote_buffer.address, theirs.data(), sizeof remote_buffer.address);
    status = ucp_ep_rkey_unpack(ep, theirs.data() + sizeof(uint64_t), &remote_buffer.rkey);
    if (status != UCS_OK) return status;
    remote.push_back(remote_buffer);
  }
  return UCS_OK;
}

UcxReference::UcxReference() = default;
UcxReference::~UcxReference() = default;

std::string UcxReference::start(int peer, const std::vector<UcxBuffer>& buffers) {
  state_ = std::make_unique<State>();
  state_->buffers = buffers;
  // Each step is agreed, so that both ranks take the same collective steps or stop together.
  const ucs_status_t init = state_->init();
  if (!tca_harness::all_ranks(init == UCS_OK))
    return init == UCS_OK ? "UCX failed on the peer"
                          : std::string("ucp_init: ") + ucs_status_string(init);
  ucx_check(state_->connect(peer), "ucp_ep_create");
  ucx_check(state_->register_memory(peer), "ucp_mem_map / rkey exchange");
  return "";
}

std::string UcxReference::open(int peer, const std::vector<UcxBuffer>& buffers) {
  if (!decided_) {
    failure_ = start(peer, buffers);
    decided_ = true;
    if (!failure_.empty()) state_.reset();
  }
  return failure_;
}

void UcxReference::send(size_t from, size_t to, size_t bytes) {
  State& s = *state_;
  const UcxBuffer& source = s.buffers[from];
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  param.memory_type = memory_type(source.gpu);
  complete(
      s.worker,
      ucp_put_nbx(s.ep, source.address, bytes, s.remote[to].address, s.remote[to].rkey, &param),
      "ucp_put_nbx");
  const ucp_request_param_t flush_param{};
  complete(s.worker, ucp_ep_flush_nbx(s.ep, &flush_param), "ucp_ep_flush_nbx");
  ++s.flag_out;
  param.memory_type = UCS_MEMORY_TYPE_HOST;
  const RemoteBuffer& flag = s.remote.back();
  complete(s.worker,
           ucp_put_nbx(s.ep, &s.flag_out, sizeof s.flag_out, flag.address, flag.rkey, &param),
           "ucp_put_nbx (flag)");
}

void UcxReference::wait_for_peer() {
  State& s = *state_;
  ++s.expected;
  while (__atomic_load_n(&s.flag, __ATOMIC_ACQUIRE) < s.expected) {
    ucp_worker_progress(s.worker);
    if (s.failed != UCS_OK)
      die(std::string("ref.ucx_put: the endpoint to the peer failed: ") +
          ucs_status_string(s.failed));
  }
}

}  // namespace tca_bench
