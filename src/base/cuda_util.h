// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// CUDA runtime errors as tca results (the one macro for them, TCA_CUDA_CHECK), and move-only
// owners of CUDA resources: what the CUDA domain, the CUDA transport and the GPU collectives share.
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "base/error.h"

namespace tca {

// The tca result a CUDA error maps to.
inline tcaResult cuda_error_result(cudaError_t error) {
  switch (error) {
    case cudaErrorMemoryAllocation:
      return TCA_ERROR_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return TCA_ERROR_UNSUPPORTED;
    default:
      return TCA_ERROR_TRANSPORT;
  }
}

}  // namespace tca

// Evaluates a CUDA runtime call; on failure returns a tca result naming the call and the error.
#define TCA_CUDA_CHECK(call)                                                              \
  do {                                                                                    \
    const cudaError_t tca_cuda_error_ = (call);                                           \
    if (tca_cuda_error_ != cudaSuccess) {                                                 \
      cudaGetLastError(); /* clears a non-sticky error so that later calls start clean */ \
      TCA_FAIL(::tca::cuda_error_result(tca_cuda_error_), "{} failed: {} ({})", #call,    \
               cudaGetErrorName(tca_cuda_error_), cudaGetErrorString(tca_cuda_error_));   \
    }                                                                                     \
  } while (0)

namespace tca {

// Owns one CUDA handle and destroys it with `Destroy`. Move-only; destruction errors are
// ignored (a destructor has no one to tell, and the context may already be torn down).
template <typename Handle, cudaError_t (*Destroy)(Handle)>
class CudaOwner {
 public:
  CudaOwner() = default;
  explicit CudaOwner(Handle handle) : handle_(handle) {}
  CudaOwner(CudaOwner&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  CudaOwner& operator=(CudaOwner&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  CudaOwner(const CudaOwner&) = delete;
  CudaOwner& operator=(const CudaOwner&) = delete;
  ~CudaOwner() { reset(); }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Handle{}; }
  void reset() {
    if (handle_ != Handle{}) Destroy(handle_);
    handle_ = Handle{};
  }

 private:
  Handle handle_{};
};

using CudaStream = CudaOwner<cudaStream_t, cudaStreamDestroy>;
using CudaEvent = CudaOwner<cudaEvent_t, cudaEventDestroy>;
using CudaGraph = CudaOwner<cudaGraph_t, cudaGraphDestroy>;
using CudaGraphExec = CudaOwner<cudaGraphExec_t, cudaGraphExecDestroy>;
using DeviceMemory = CudaOwner<void*, cudaFree>;
using HostRegistration = CudaOwner<void*, cudaHostUnregister>;  // from cudaHostRegister
using IpcMapping = CudaOwner<void*, cudaIpcCloseMemHandle>;     // from cudaIpcOpenMemHandle
using PinnedHostMemory = CudaOwner<void*, cudaFreeHost>;        // from cudaHostAlloc

// Small helpers that return owners, so callers never hold a raw handle.
inline tcaResult make_stream(unsigned flags, CudaStream* out) {
  cudaStream_t stream = nullptr;
  TCA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, flags));
  *out = CudaStream(stream);
  return TCA_SUCCESS;
}

inline tcaResult make_device_memory(size_t bytes, DeviceMemory* out) {
  void* ptr = nullptr;
  TCA_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  *out = DeviceMemory(ptr);
  return TCA_SUCCESS;
}

// Copies `bytes` (host or device memory, either way) in a private non-blocking stream and waits
// for that copy alone. Complete on return, where a cudaMemcpy from pageable memory may return
// first; and held up by no other stream's work, where a wait on the legacy default stream waits
// for every blocking stream, among them kernels that wait for a peer.
inline tcaResult copy_and_wait(void* dst, const void* src, size_t bytes) {
  CudaStream stream;
  TCA_CHECK(make_stream(cudaStreamNonBlocking, &stream));
  TCA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()));
  TCA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return TCA_SUCCESS;
}

// Zeroes `bytes` of device memory the same way: complete on return, waiting for nothing else.
inline tcaResult zero_and_wait(void* dst, size_t bytes) {
  CudaStream stream;
  TCA_CHECK(make_stream(cudaStreamNonBlocking, &stream));
  TCA_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream.get()));
  TCA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return TCA_SUCCESS;
}

// Copies `bytes` from the host into new device memory (tables the kernels read), landed on return.
inline tcaResult make_device_copy(const void* data, size_t bytes, DeviceMemory* out) {
  TCA_CHECK(make_device_memory(bytes, out));
  return copy_and_wait(out->get(), data, bytes);
}

}  // namespace tca
