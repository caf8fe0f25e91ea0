// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU memory domain of CUDA builds: this rank's device (chosen among the GPUs of its
// machine by its rank there), cudaMalloc'd memory exported through CUDA IPC, and host memory
// pinned and mapped for the GPU engines. The CUDA transport and the UCX transport reach GPU
// memory through it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/cuda_util.h"
#include "domain/memory_domain.h"

namespace tca {

class CudaDomain final : public MemoryDomain {
 public:
  explicit CudaDomain(const DomainSetup& setup)
      : rank_(setup.rank), machine_rank_(setup.machine_rank) {}
  // Picks the device (no GPU is not an error: unavailable_reason() says why).
  tcaResult init();

  tcaMemKind kind() const override { return TCA_MEM_GPU; }
  const char* name() const override { return "cuda"; }
  std::string unavailable_reason() const override { return device_ < 0 ? problem_ : ""; }
  tcaResult allocate(size_t bytes, void** ptr) override;
  bool find_allocation(const void* ptr, size_t* bytes) const override;
  tcaResult release(void* ptr) override;
  bool contains(const void* ptr) const override;
  tcaResult export_range(void* ptr, size_t bytes, PeerRegion* region) override;
  void allocated_elsewhere(void* ptr, size_t bytes) override;
  void releasing_elsewhere(void* ptr) override;

  // ---- what GPU engines need ----
  int device() const { return device_; }  // -1: this rank has no usable GPU
  const std::string& uuid() const { return uuid_; }
  // Gives up the device (a transport could not set it up): GPU calls then fail with `reason`.
  void disable(const std::string& reason);
  tcaResult require_device() const;
  // Makes the device current on the calling thread (tca may be called from any).
  tcaResult use_device() const;
  // Pins host memory and maps it for the GPU: the owner and the device address.
  tcaResult pin(void* ptr, size_t bytes, HostRegistration* out, unsigned char** device) const;
  // The device address of host memory [ptr, ptr+bytes) if pinned and mapped, else null.
  unsigned char* mapped_host_address(const void* ptr, size_t bytes) const;
  // Whether `address` lies in one of this rank's own GPU allocations.
  bool owns_address(uintptr_t address) const;
  // Called before each cudaFree: a kernel that never ends (the resident one) must end first.
  void on_release(std::function<void()> hook) { release_hooks_.push_back(std::move(hook)); }

 private:
  struct Allocation {
    DeviceMemory memory;
    size_t bytes = 0;
  };

  int rank_ = 0;
  int machine_rank_ = 0;  // ranks of one machine share its GPUs round robin
  int device_ = -1;
  std::string uuid_;
  std::string problem_;  // why there is no device
  std::map<uintptr_t, Allocation> allocations_;
  std::map<uintptr_t, HostRegistration> pinned_blocks_;  // other domains' blocks, by base
  std::vector<std::function<void()>> release_hooks_;
};

// The job's GPU domain as a CUDA domain (null in a build or on a rank without one).
CudaDomain* cuda_domain(MemoryDomain* gpu_domain);
// "GPU-xxxxxxxx-..." of a device ordinal.
tcaResult device_uuid(int device, std::string* out);
// The allocation holding a device pointer (the driver knows; the runtime has no such query).
tcaResult allocation_range(const void* ptr, uintptr_t* base, size_t* bytes);
// cudaMalloc rounds what tcaMalloc asks for to whole 2 MiB pages from 2 MiB on.
size_t allocation_bytes(size_t bytes);

}  // namespace tca
