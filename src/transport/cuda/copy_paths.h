// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The two GPU engines that carry a chain: the copy engines (a CUDA graph of memcpy nodes and
// notification kernel nodes, built once) and the SMs (one copy kernel over all pieces). Both
// take the chain in addresses this rank's GPU can reach, and both can be enqueued on any
// stream, a capturing one included.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "tca/tca.h"
#include "transport/cuda/kernels.h"

namespace tca {

// One transfer in device-reachable addresses.
struct DevicePiece {
  unsigned char* dst = nullptr;
  const unsigned char* src = nullptr;
  uint64_t width = 0;
  uint64_t count = 1;
  uint64_t dst_pitch = 0;
  uint64_t src_pitch = 0;
  // Raised once this piece and every earlier one are visible at their destinations.
  std::vector<NotifyTarget> notifies;
};

// kResident: the SMs, with host kicks of small chains served by the resident kernel.
enum class Engine { kCopyEngine, kSm, kResident };
const char* engine_name(Engine engine);

// A chain runs in one of two ways. A host kick publishes notification values the host counted
// (no read of the sequence over PCIe on the critical path). A stream-ordered run counts them on
// the GPU, so that every replay of a captured graph notifies once more.
class GpuChain {
 public:
  virtual ~GpuChain() = default;
  // Whether kick() publishes host-counted values for every notification of the chain.
  virtual bool host_counted() const = 0;
  // Host kick on `stream`: `values` holds one value per notification, in chain order.
  virtual tcaResult kick(cudaStream_t stream, const uint64_t* values) = 0;
  // Stream-ordered run on `stream`; under stream capture it is added to the captured graph
  // instead (so the chain must outlive that graph).
  virtual tcaResult enqueue(cudaStream_t stream) = 0;
  // The phases the resident kernel runs for a host kick of this chain (device memory), or null
  // where the chain is not for it.
  virtual const SmCopyParams* resident_phases() const { return nullptr; }
};

// Chains up to this many bytes (and up to kInlineNotifyValues notifications) are served by the
// resident kernel on TCA_PATH_CUDA_RESIDENT; its one block moves less than a launch of many
// (8 B to 32 KiB host-kicked ping-pongs between two H200s were faster through the resident
// kernel, 128 KiB slower: docs/PERFORMANCE.md).
constexpr uint64_t kResidentMaxBytes = uint64_t{32} << 10;

// What a chain needs to know of the device it runs on.
struct DeviceLimits {
  int multiprocessors = 1;
  uint64_t max_pitch = 0;        // the copy engines' largest 2D pitch
  bool write_value_ops = false;  // 64-bit stream write-value operations (graph mem-op nodes)
};

// Whether the device runs 64-bit stream memory operations (false where the driver says no).
bool device_has_write_value_ops(int device);

// Whether the copy engines can carry `piece` (2D pitches within the device's limit).
bool copy_engine_can_carry(const DevicePiece& piece, const DeviceLimits& limits);

tcaResult make_gpu_chain(Engine engine, const std::vector<DevicePiece>& pieces,
                         const DeviceLimits& limits, std::unique_ptr<GpuChain>* out);

}  // namespace tca
