// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A memory domain owns one kind of memory on this rank, as libfabric's domains and UCX's memory
// domains do: it allocates it (tcaMalloc), says whether a pointer is of its kind, checks a range
// and fills what a handle of it carries (its export: a memfd, a CUDA IPC handle), and pins other
// domains' memory for its own engines. Transports reach memory through the domains; no transport
// owns one.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/host_memory.h"
#include "base/region.h"
#include "tca/tca.h"

namespace tca {

// What a memory domain knows of the job, given by the context at tcaInit.
struct DomainSetup {
  uint64_t job_key = 0;
  int rank = 0;
  int machine_rank = 0;  // this rank's index among the ranks of its machine
  // tca's own host blocks (control block, notification counters): never registrable.
  std::vector<const HostBlock*> internal;
};

class MemoryDomain {
 public:
  virtual ~MemoryDomain() = default;
  virtual tcaMemKind kind() const = 0;
  virtual const char* name() const = 0;
  // Why this rank has no memory of this kind ("" when it has).
  virtual std::string unavailable_reason() const = 0;

  virtual tcaResult allocate(size_t bytes, void** ptr) = 0;
  // Whether `ptr` starts an allocation made by allocate(), and its size.
  virtual bool find_allocation(const void* ptr, size_t* bytes) const = 0;
  virtual tcaResult release(void* ptr) = 0;
  // Whether `ptr` is memory of this domain's kind (allocated here or not).
  virtual bool contains(const void* ptr) const = 0;
  // Checks that [ptr, ptr+bytes) is registrable memory of this kind and fills the export fields
  // of `region`'s handle (and what the owner's record keeps of it).
  virtual tcaResult export_range(void* ptr, size_t bytes, PeerRegion* region) = 0;

  // Another domain allocated or is about to free [ptr, ptr+bytes): e.g. the GPU domain pins
  // host blocks for its engines. Failures are not fatal (the memory is pinned when first used).
  virtual void allocated_elsewhere(void* /*ptr*/, size_t /*bytes*/) {}
  virtual void releasing_elsewhere(void* /*ptr*/) {}
};

// This rank's host memory: memfd blocks that same-host peers can map.
tcaResult make_host_domain(const DomainSetup& setup, std::unique_ptr<MemoryDomain>* out);
// This rank's GPU memory: the CUDA domain in CUDA builds, else a domain that has none.
tcaResult make_gpu_domain(const DomainSetup& setup, std::unique_ptr<MemoryDomain>* out);

}  // namespace tca
