// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernels launched early (programmatic dependent launch, compute capability 9.0 and up): such a
// kernel is started while the one before it in the stream still runs and waits inside for that
// one's end, which saves part of the gap between the two. tca-cg and tca-bfs launch theirs so.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace tca_apps {

// The first step of a kernel that may be launched early: wait for the kernel before it in the
// stream to end and its writes to be visible (a no-op where it was launched as usual), then let
// the kernel after it launch. It must come first and unconditionally, also in a kernel with
// nothing to do: the kernel after it waits for this one only, so this one must end after its
// predecessor. Only reads of data no kernel writes may come before it.
__device__ __forceinline__ void begin_dependent_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// A launch's configuration for cudaLaunchKernelEx: grid, block, dynamic shared memory and
// stream, and, where `early`, the attribute that lets the kernel start early. Not copyable (the
// configuration points at its own attribute).
class LaunchConfig {
 public:
  LaunchConfig(int blocks, int threads, size_t shared, cudaStream_t stream, bool early) {
    config_.gridDim = dim3(static_cast<unsigned>(blocks));
    config_.blockDim = dim3(static_cast<unsigned>(threads));
    config_.dynamicSmemBytes = shared;
    config_.stream = stream;
    attribute_.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute_.val.programmaticStreamSerializationAllowed = 1;
    config_.attrs = &attribute_;
    config_.numAttrs = early ? 1 : 0;
  }
  LaunchConfig(const LaunchConfig&) = delete;
  LaunchConfig& operator=(const LaunchConfig&) = delete;
  const cudaLaunchConfig_t* get() const { return &config_; }

 private:
  cudaLaunchAttribute attribute_ = {};
  cudaLaunchConfig_t config_ = {};
};

}  // namespace tca_apps
