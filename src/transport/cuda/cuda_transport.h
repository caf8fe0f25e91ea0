// The CUDA transport as the core sees it: a transport (the table of operations) plus the GPU
// memory of this rank's device and what a handle of GPU memory carries. Plain C++: the core
// includes it whether or not the build has CUDA, and only calls it when it exists.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/handle.h"
#include "transport/transport.h"

namespace tca {

class CudaTransport : public Transport {
 public:
  using Transport::Transport;
  // cudaMalloc on this rank's device; UNSUPPORTED on a rank that has no GPU.
  virtual tcaResult allocate(size_t bytes, void** ptr) = 0;
  // Whether `ptr` starts an allocation made by allocate(), and its size.
  virtual bool find_allocation(const void* ptr, size_t* bytes) const = 0;
  virtual tcaResult release(void* ptr) = 0;
  // Pins a tcaMalloc host block and maps it for the GPU engines (nothing without a GPU).
  virtual tcaResult pin_host_block(void* ptr, size_t bytes) = 0;
  virtual void unpin_host_block(void* ptr) = 0;
  // Checks that [ptr, ptr+bytes) is device memory of this rank's GPU inside one allocation and
  // fills the handle's device fields (the IPC export and the offset inside the allocation).
  virtual tcaResult export_device_range(const void* ptr, size_t bytes, WireHandle* wire) = 0;
  // TCA_MEM_GPU for device memory, else TCA_MEM_CPU.
  virtual tcaMemKind memory_kind(const void* ptr) const = 0;
};

// Collective. Chooses this rank's GPU, exchanges what peers need to reach it, calibrates the
// copy-engine/SM crossover when the cache lacks it, and appends the transports of the paths
// TCA_PATH_CUDA (first), TCA_PATH_CUDA_CE, _SM and _RESIDENT to `transports`.
tcaResult make_cuda_transport(Context& context, int id,
                              std::vector<std::unique_ptr<Transport>>* transports);

}  // namespace tca
