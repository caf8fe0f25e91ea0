// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The host side of the resident kernel (TCA_PATH_CUDA_RESIDENT, kernels.h): its ring in
// host-mapped memory, its stream, and the kicks, waits and launches around it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "base/cuda_util.h"
#include "tca/tca.h"
#include "transport/cuda/kernels.h"

namespace tca {

class ResidentServer {
 public:
  // On the current device; the kernel leaves after `idle_ns` without a kick.
  static tcaResult make(uint64_t idle_ns, std::unique_ptr<ResidentServer>* out);
  ~ResidentServer();  // stop()s; errors are dropped there (destructors have no one to tell)

  // Whether a kick can carry these notification values (a slot's words hold 48 bits each),
  // and phases at this address.
  static bool carries(const uint64_t* values, uint32_t count);
  static bool carries_address(uintptr_t address);
  // Kicks the chain whose phases are at `phases` (device memory) with its `count` notification
  // values (carries() must hold); kicks are served in order.
  tcaResult kick(const SmCopyParams* phases, const uint64_t* values, uint32_t count);
  // Whether a kick is not yet served.
  bool busy() const { return completed() < kicked_; }
  // Every kick so far is served (an error if the kernel ended without serving one).
  tcaResult wait_all();
  // Ends the kernel, so that nothing waits for it: a cudaFree, for one, waits for every kernel.
  tcaResult stop();

 private:
  explicit ResidentServer(uint64_t idle_ns) : idle_ns_(idle_ns) {}
  uint64_t completed() const { return ring()->completed; }
  volatile ResidentRing* ring() const { return static_cast<volatile ResidentRing*>(ring_.get()); }
  // Writes kick kicked_ + 1 with `phases` (null: leave) into its slot, once the slot is free.
  tcaResult write_slot(const SmCopyParams* phases, const uint64_t* values, uint32_t count);
  // After a kick: the kernel sees it, or it left (or never ran) and a new one is launched.
  tcaResult make_sure_served();

  uint64_t idle_ns_;
  PinnedHostMemory ring_;
  ResidentRing* ring_device_ = nullptr;
  CudaStream stream_;
  CudaEvent ended_;        // recorded after each launch
  bool launched_ = false;  // a kernel was launched and may not have ended
  uint64_t kicked_ = 0;    // kicks written
};

}  // namespace tca
