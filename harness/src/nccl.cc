// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/nccl.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "tca_harness/check.h"
#include "tca_harness/ranks.h"

namespace tca_harness {

// The entry points, resolved from the loaded library.
struct Nccl::Api {
  ncclResult_t (*get_version)(int*) = nullptr;
  ncclResult_t (*get_unique_id)(ncclUniqueId*) = nullptr;
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
  const char* (*get_error_string)(ncclResult_t) = nullptr;
  const char* (*get_last_error)(ncclComm_t) = nullptr;  // optional (NCCL >= 2.13)
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                             cudaStream_t) = nullptr;
  ncclResult_t (*all_gather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t,
                             cudaStream_t) = nullptr;
  ncclResult_t (*reduce_scatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                 ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                            cudaStream_t) = nullptr;
  ncclResult_t (*send)(const void*, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t) = nullptr;
  ncclResult_t (*recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*group_start)() = nullptr;
  ncclResult_t (*group_end)() = nullptr;
};

namespace {

template <typename Function>
bool resolve(void* library, const char* name, Function* function) {
  *function = reinterpret_cast<Function>(dlsym(library, name));
  return *function != nullptr;
}

// This rank's GPU: its host's name and its PCI bus id (empty where CUDA cannot say).
struct GpuPlace {
  char host[64] = {};
  char bus[32] = {};
};

GpuPlace gpu_place() {
  GpuPlace place;
  if (gethostname(place.host, sizeof place.host - 1) != 0) place.host[0] = '\0';
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(place.bus, sizeof place.bus, device) != cudaSuccess) {
    cudaGetLastError();
    place.bus[0] = '\0';
  }
  return place;
}

// Collective: the first two ranks that share a GPU, named (the same text on every rank), or "".
// NCCL refuses a communicator with two ranks on one GPU, but only on the ranks that see the
// other one on theirs: the ranks it lets in would then wait for the others until they time out.
std::string shared_gpu(const Control& control) {
  const GpuPlace mine = gpu_place();
  std::vector<GpuPlace> all(static_cast<size_t>(control.size));
  control.allgather(&mine, all.data(), sizeof mine);
  for (int a = 0; a < control.size; ++a)
    for (int b = a + 1; b < control.size; ++b) {
      const GpuPlace& x = all[a];
      const GpuPlace& y = all[b];
      if (x.bus[0] == '\0' || std::strncmp(x.bus, y.bus, sizeof x.bus) != 0 ||
          std::strncmp(x.host, y.host, sizeof x.host) != 0)
        continue;
      return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " share the GPU " +
             std::string(x.bus, strnlen(x.bus, sizeof x.bus)) + " (NCCL needs a GPU per rank)";
    }
  return "";
}

}  // namespace

Nccl::~Nccl() {
  if (comm_ != nullptr) api_->comm_destroy(comm_);
  delete api_;
  if (library_ != nullptr) dlclose(library_);
}

std::string Nccl::load(const std::string& library) {
  library_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) return "cannot load " + library + ": " + dlerror();
  auto api = std::make_unique<Api>();
  resolve(library_, "ncclGetLastError", &api->get_last_error);
  const bool complete = resolve(library_, "ncclGetVersion", &api->get_version) &&
                        resolve(library_, "ncclGetUniqueId", &api->get_unique_id) &&
                        resolve(library_, "ncclCommInitRank", &api->comm_init_rank) &&
                        resolve(library_, "ncclCommDestroy", &api->comm_destroy) &&
                        resolve(library_, "ncclCommAbort", &api->comm_abort) &&
                        resolve(library_, "ncclGetErrorString", &api->get_error_string) &&
                        resolve(library_, "ncclAllReduce", &api->all_reduce) &&
                        resolve(library_, "ncclAllGather", &api->all_gather) &&
                        resolve(library_, "ncclReduceScatter", &api->reduce_scatter) &&
                        resolve(library_, "ncclBroadcast", &api->broadcast) &&
                        resolve(library_, "ncclSend", &api->send) &&
                        resolve(library_, "ncclRecv", &api->recv) &&
                        resolve(library_, "ncclGroupStart", &api->group_start) &&
                        resolve(library_, "ncclGroupEnd", &api->group_end);
  if (!complete) return library + " lacks an entry point (NCCL 2.7 or newer is needed)";
  api_ = api.release();
  return "";
}

std::string Nccl::connect(const Control& control) {
  ncclUniqueId id{};
  ncclResult_t result = control.rank == 0 ? api_->get_unique_id(&id) : ncclSuccess;
  control.broadcast(&result, sizeof result, 0);
  if (result != ncclSuccess) return std::string("ncclGetUniqueId: ") + error_string(result);
  control.broadcast(&id, sizeof id, 0);
  result = api_->comm_init_rank(&comm_, control.size, id, control.rank);
  if (result == ncclSuccess) return "";
  std::string reason = std::string("ncclCommInitRank: ") + error_string(result);
  const char* detail = api_->get_last_error != nullptr ? api_->get_last_error(nullptr) : nullptr;
  if (detail != nullptr && *detail != '\0') reason += std::string(" (") + detail + ")";
  comm_ = nullptr;
  return reason;
}

std::string Nccl::open(const Control& control, const std::string& library) {
  if (comm_ != nullptr || !failure_.empty()) return failure_;  // decided before
  failure_ = agreed_reason(load(library), control, library + " cannot be used on another rank");
  if (!failure_.empty()) return failure_;
  failure_ = shared_gpu(control);
  if (!failure_.empty()) return failure_;
  failure_ = agreed_reason(connect(control), control, "NCCL refused another rank");
  if (!failure_.empty() && comm_ != nullptr) {  // this rank got in, another did not
    api_->comm_abort(comm_);
    comm_ = nullptr;
  }
  return failure_;
}

std::string Nccl::version() const {
  if (api_ == nullptr) return "(not loaded)";
  int code = 0;
  check(api_->get_version(&code), "ncclGetVersion");
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

const char* Nccl::error_string(ncclResult_t result) const {
  return api_ != nullptr ? api_->get_error_string(result) : "NCCL is not loaded";
}

void Nccl::check(ncclResult_t result, const char* call) const {
  if (result == ncclSuccess) return;
  std::string message = std::string(call) + ": " + error_string(result);
  const char* detail =
      api_ != nullptr && api_->get_last_error != nullptr ? api_->get_last_error(comm_) : nullptr;
  if (detail != nullptr && *detail != '\0') message += std::string(" (") + detail + ")";
  die(message);
}

ncclResult_t Nccl::all_reduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                              ncclRedOp_t op, cudaStream_t stream) const {
  if (!ready()) return ncclInvalidUsage;
  return api_->all_reduce(send, recv, count, type, op, comm_, stream);
}

ncclResult_t Nccl::all_gather(const void* send, void* recv, size_t count_per_rank,
                              ncclDataType_t type, cudaStream_t stream) const {
  if (!ready()) return ncclInvalidUsage;
  return api_->all_gather(send, recv, count_per_rank, type, comm_, stream);
}

ncclResult_t Nccl::reduce_scatter(const void* send, void* recv, size_t count_per_rank,
                                  ncclDataType_t type, ncclRedOp_t op, cudaStream_t stream) const {
  if (!ready()) return ncclInvalidUsage;
  return api_->reduce_scatter(send, recv, count_per_rank, type, op, comm_, stream);
}

ncclResult_t Nccl::broadcast(const void* send, void* recv, size_t count, ncclDataType_t type,
                             int root, cudaStream_t stream) const {
  if (!ready()) return ncclInvalidUsage;
  return api_->broadcast(send, recv, count, type, root, comm_, stream);
}

ncclResult_t Nccl::send(const void* data, size_t count, ncclDataType_t type, int peer,
                        cudaStream_t stream) const {
  if (!ready()) return ncclInvalidUsage;
  return api_->send(data, count, type, peer, comm_, stream);
}

ncclResult_t Nccl::recv(void* data, size_t count, ncclDataType_t type, int peer,
                        cudaStream_t stream) const {
  if (!ready()) return ncclInvalidUsage;
  return api_->recv(data, count, type, peer, comm_, stream);
}

ncclResult_t Nccl::group_start() const {
  return api_ != nullptr ? api_->group_start() : ncclInvalidUsage;
}

ncclResult_t Nccl::group_end() const {
  return api_ != nullptr ? api_->group_end() : ncclInvalidUsage;
}

}  // namespace tca_harness
