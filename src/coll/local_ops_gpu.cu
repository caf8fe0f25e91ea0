// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The local operations of collectives whose buffers are GPU memory and whose schedule the host
// runs (ranks that CUDA IPC does not connect, e.g. on other hosts): a kernel per reduction and a
// device copy, each complete when the call returns, since the next step may hand the data to a
// transport that reads GPU memory directly.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "base/cuda_util.h"
#include "coll/local_ops.h"
#include "coll/status.h"
#include "tca/detail/reduce_ops.h"

namespace tca::coll {
namespace {

template <typename T, typename Op>
__global__ void reduce_kernel(T* dst, const T* a, const T* b, size_t count) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride)
    dst[i] = Op{}(a[i], b[i]);
}

using Launch = cudaError_t (*)(void* dst, const void* a, const void* b, size_t count,
                               cudaStream_t stream);

template <typename T, typename Op>
cudaError_t launch(void* dst, const void* a, const void* b, size_t count, cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  const size_t wanted = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 1024 ? (wanted > 0 ? wanted : 1) : 1024);
  reduce_kernel<T, Op><<<blocks, kThreads, 0, stream>>>(
      static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), count);
  return cudaGetLastError();
}

Launch launch_for(tcaDataType type, tcaRedOp op) {
  Launch chosen = nullptr;
  tca_reduce::with_type(type, [&](auto element) {
    tca_reduce::with_op(
        op, [&](auto operation) { chosen = launch<decltype(element), decltype(operation)>; });
  });
  return chosen;
}

class DeviceOps final : public LocalOps {
 public:
  explicit DeviceOps(Launch launch) : launch_(launch) {}
  ~DeviceOps() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  tcaResult init() {
    TCA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return TCA_SUCCESS;
  }

  tcaResult copy(void* dst, const void* src, size_t bytes) override {
    TCA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_));
    TCA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return TCA_SUCCESS;
  }
  tcaResult reduce(void* dst, const void* a, const void* b, size_t count) override {
    if (count == 0) return TCA_SUCCESS;
    TCA_CUDA_CHECK(launch_(dst, a, b, count, stream_));
    TCA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return TCA_SUCCESS;
  }

 private:
  Launch launch_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

tcaResult make_device_local_ops(tcaDataType type, tcaRedOp op, std::unique_ptr<LocalOps>* out) {
  const Launch launch = launch_for(type, op);
  if (launch == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown data type {} or reduction {}",
             static_cast<int>(type), static_cast<int>(op));
  auto ops = std::make_unique<DeviceOps>(launch);
  TCA_CHECK(ops->init());
  *out = std::move(ops);
  return TCA_SUCCESS;
}

}  // namespace tca::coll
