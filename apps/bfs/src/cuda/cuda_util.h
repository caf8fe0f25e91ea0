// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// CUDA helpers of tca-bfs: errors as Error, owned device and pinned host arrays.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "common.h"
#ifdef __CUDACC__
#include "early_launch.cuh"
#endif

namespace bfs {

inline void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw Error(std::string(call) + ": " + cudaGetErrorString(error));
}

// `count` elements of T in GPU memory, freed with the object.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(size_t count) { resize(count); }
  ~DeviceArray() { release(); }
  DeviceArray(DeviceArray&& other) noexcept { *this = std::move(other); }
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  // Discards the contents.
  void resize(size_t count) {
    release();
    if (count == 0) return;
    void* memory = nullptr;
    const cudaError_t error = cudaMalloc(&memory, count * sizeof(T));
    if (error != cudaSuccess)
      throw Error("cannot allocate " + std::to_string(count * sizeof(T)) +
                  " bytes of GPU memory: " + cudaGetErrorString(error));
    data_ = static_cast<T*>(memory);
    size_ = count;
  }
  void release() {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data() const { return data_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// Page-locked host memory (fast, asynchronous copies).
template <class T>
class PinnedArray {
 public:
  explicit PinnedArray(size_t count) {
    if (count == 0) return;
    void* memory = nullptr;
    check_cuda(cudaMallocHost(&memory, count * sizeof(T)), "cudaMallocHost");
    data_ = static_cast<T*>(memory);
    size_ = count;
  }
  ~PinnedArray() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  T* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// A copy in `stream`'s order, complete when it returns (also from pageable host memory, where a
// plain cudaMemcpy may return before its DMA ends, unordered with non-blocking streams).
inline void copy_sync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
                      cudaStream_t stream) {
  if (bytes == 0) return;
  check_cuda(cudaMemcpyAsync(to, from, bytes, kind, stream), "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

// `bytes` of GPU memory set to zero in `stream`'s order, complete when it returns. A plain
// cudaMemset runs in the legacy stream, unordered with the non-blocking streams the engines
// use: under load it could land after their first kernels' stores.
inline void zero_sync(void* to, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  check_cuda(cudaMemsetAsync(to, 0, bytes, stream), "cudaMemsetAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

// Blocks for a grid-stride loop over `items`: enough to fill the GPU, no more than needed.
int grid_for(size_t items, int threads_per_block);

#ifdef __CUDACC__
// Launches `kernel` on `stream`, early (TCA_BFS_EARLY=1: the kernel begins with
// tca_apps::begin_dependent_kernel) or after the kernel before it as usual.
template <typename... Params, typename... Args>
void launch_kernel(bool early, const char* name, void (*kernel)(Params...), int blocks, int threads,
                   cudaStream_t stream, Args&&... args) {
  const tca_apps::LaunchConfig config(blocks, threads, 0, stream, early);
  check_cuda(cudaLaunchKernelEx(config.get(), kernel, std::forward<Args>(args)...), name);
}

// The GPU's clock in ns (%globaltimer), the same for every kernel of the device. It moves in
// steps of about 1 us on some GPUs (H100, H200): fine for phases of tens of us, not below.
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}
#endif

}  // namespace bfs
