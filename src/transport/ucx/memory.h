// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Memory registered with UCX (ucp_mem_map) and the keys that let peers reach it: this rank packs
// a region's remote key into bytes (carried in the region's handle or control block), a peer
// unpacks them for its endpoint to this rank. RAII, move-only.
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tca/tca.h"
#include "transport/ucx/owner.h"
#include "transport/ucx/worker.h"

namespace tca::ucx {

// "host", "cuda", ... (UCX's own names).
const char* memory_type_name(ucs_memory_type_t type);

class MemoryRegion {
 public:
  MemoryRegion() = default;
  // Registers [address, address + bytes) of memory of `type` (host or CUDA);
  // UCS_MEMORY_TYPE_UNKNOWN lets UCX detect it. Fails on zero bytes.
  static tcaResult map(const UcpContext& context, void* address, size_t bytes,
                       ucs_memory_type_t type, MemoryRegion* out);
  MemoryRegion(MemoryRegion&& other) noexcept;
  MemoryRegion& operator=(MemoryRegion&& other) noexcept;
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;
  ~MemoryRegion();

  ucp_mem_h get() const { return memh_; }
  void* address() const { return address_; }
  size_t bytes() const { return bytes_; }
  ucs_memory_type_t memory_type() const { return type_; }  // as given, or as UCX found it
  // The remote key a peer unpacks to reach this region.
  tcaResult pack_rkey(std::vector<uint8_t>* out) const;

 private:
  void release();
  ucp_context_h context_ = nullptr;
  ucp_mem_h memh_ = nullptr;
  void* address_ = nullptr;
  size_t bytes_ = 0;
  ucs_memory_type_t type_ = UCS_MEMORY_TYPE_UNKNOWN;
};

class RemoteKey {
 public:
  RemoteKey() = default;
  // Unpacks a key packed by the region's owner, for `ep`, an endpoint to that owner.
  static tcaResult unpack(ucp_ep_h ep, const void* packed, size_t bytes, RemoteKey* out);

  ucp_rkey_h get() const { return rkey_.get(); }

 private:
  UcxOwner<ucp_rkey_h, ucp_rkey_destroy> rkey_;
};

}  // namespace tca::ucx
