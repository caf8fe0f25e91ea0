// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The C API of tca/tca_cuda.h: argument checks, then the CUDA transport does the work.
#include "base/error.h"
#include "core/context.h"
#include "core/desc.h"
#include "core/reserved.h"
#include "tca/tca_cuda.h"
#include "transport/cuda/cuda_transport_impl.h"

namespace tca {
namespace {

tcaResult get_cuda(Context** context, CudaTransportImpl** cuda) {
  *context = current_context();
  if (*context == nullptr) TCA_FAIL(TCA_ERROR_NOT_INITIALIZED, "call tcaInit first");
  *cuda = dynamic_cast<CudaTransportImpl*>((*context)->find_transport(TCA_PATH_CUDA));
  if (*cuda == nullptr) TCA_FAIL(TCA_ERROR_UNSUPPORTED, "this build has no CUDA transport");
  return (*cuda)->require_device();
}

tcaResult check_rank(const Context& context, int rank) {
  if (rank < 0 || rank >= context.size())
    TCA_FAIL(TCA_ERROR_INVALID_RANK, "rank {} outside [0, {})", rank, context.size());
  return TCA_SUCCESS;
}

}  // namespace
}  // namespace tca

#define TCA_CUDA_CONTEXT(context, cuda)   \
  tca::Context* context = nullptr;        \
  tca::CudaTransportImpl* cuda = nullptr; \
  TCA_CHECK(tca::get_cuda(&context, &cuda))

extern "C" {

tcaResult tcaCudaDevice(int* device) {
  TCA_CUDA_CONTEXT(context, cuda);
  if (device == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "device is NULL");
  *device = cuda->device();
  return TCA_SUCCESS;
}

tcaResult tcaStartDMADescStream(tcaDesc desc, cudaStream_t stream) {
  TCA_CUDA_CONTEXT(context, cuda);
  tcaDesc_st* chain = nullptr;
  TCA_CHECK(context->descriptors().find(desc, &chain));
  if (chain->channel < 0)
    TCA_FAIL(TCA_ERROR_INVALID_DESC, "descriptor is not bound to a channel: call tcaDescSet");
  std::vector<tca::CudaRun*> runs;
  for (size_t i = 0; i < chain->runs.size(); ++i) {
    auto* run = dynamic_cast<tca::CudaRun*>(chain->runs[i].get());
    if (run == nullptr)
      TCA_FAIL(TCA_ERROR_UNSUPPORTED,
               "part {} of the chain is carried by {}; a stream-ordered "
               "chain must take a CUDA path for every transfer (tcaDescSetPath TCA_PATH_CUDA)",
               i, chain->run_transports[i]->name());
    runs.push_back(run);
  }
  TCA_CHECK(tca::check_own_regions_alive(*context, *chain));
  for (tca::CudaRun* run : runs) TCA_CHECK(run->enqueue(stream));
  return TCA_SUCCESS;
}

tcaResult tcaWaitDMARecvDescStream(int src_rank, int slot, cudaStream_t stream) {
  TCA_CUDA_CONTEXT(context, cuda);
  if (src_rank == TCA_ANY_RANK)
    TCA_FAIL(TCA_ERROR_INVALID_RANK, "a stream-ordered wait names its sender (not TCA_ANY_RANK)");
  TCA_CHECK(tca::check_rank(*context, src_rank));
  TCA_CHECK(tca::check_slot(slot));
  return cuda->enqueue_notification_wait(src_rank, slot, stream);
}

tcaResult tcaDevicePointer(void** ptr, const tcaHandle* handle, size_t offset, size_t bytes) {
  TCA_CUDA_CONTEXT(context, cuda);
  if (ptr == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "ptr is NULL");
  tca::PeerRegion* region = nullptr;
  TCA_CHECK(context->resolve(handle, &region));
  TCA_CHECK(tca::check_extent(*region, "device window", offset, bytes, bytes, 1));
  unsigned char* base = nullptr;
  TCA_CHECK(cuda->device_address(*region, &base));
  *ptr = base + offset;
  return TCA_SUCCESS;
}

tcaResult tcaDeviceSignal(uint64_t** signal, int rank, int index) {
  TCA_CUDA_CONTEXT(context, cuda);
  if (signal == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "signal is NULL");
  TCA_CHECK(tca::check_rank(*context, rank));
  return cuda->signal_address(rank, index, signal);
}

tcaResult tcaCudaCrossover(int peer, size_t* bytes) {
  TCA_CUDA_CONTEXT(context, cuda);
  if (bytes == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  TCA_CHECK(tca::check_rank(*context, peer));
  if (!cuda->reaches(peer))
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "rank {} is not reachable through CUDA", peer);
  *bytes = static_cast<size_t>(cuda->crossover(peer));
  return TCA_SUCCESS;
}

tcaResult tcaCudaAutoPath(int peer, size_t bytes, tcaPath* path) {
  TCA_CUDA_CONTEXT(context, cuda);
  if (path == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "path is NULL");
  TCA_CHECK(tca::check_rank(*context, peer));
  if (!cuda->reaches(peer))
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "rank {} is not reachable through CUDA", peer);
  const tca::Engine engine = cuda->choose_engine(peer, bytes, UINT64_MAX);
  *path = engine == tca::Engine::kCopyEngine ? TCA_PATH_CUDA_CE : TCA_PATH_CUDA_SM;
  return TCA_SUCCESS;
}

tcaResult tcaCudaCalibration(int peer, tcaCudaCalibrationPoint* points, int capacity, int* count) {
  TCA_CUDA_CONTEXT(context, cuda);
  if (count == nullptr || (points == nullptr && capacity > 0))
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "count is NULL, or points is NULL with capacity {}",
             capacity);
  TCA_CHECK(tca::check_rank(*context, peer));
  const tca::PairCalibration* pair = cuda->calibration(peer);
  *count = 0;
  if (pair == nullptr) return TCA_SUCCESS;
  for (size_t i = 0; i < pair->sizes.size() && *count < capacity; ++i, ++*count)
    points[i] = {static_cast<size_t>(pair->sizes[i]), pair->ce_gbps[i], pair->sm_gbps[i]};
  return TCA_SUCCESS;
}

}  // extern "C"
