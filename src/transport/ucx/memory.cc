// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/ucx/memory.h"

#include <ucs/memory/memory_type.h>

#include <utility>

#include "transport/ucx/status.h"

namespace tca::ucx {

const char* memory_type_name(ucs_memory_type_t type) {
  return type >= UCS_MEMORY_TYPE_HOST && type < UCS_MEMORY_TYPE_LAST ? ucs_memory_type_names[type]
                                                                     : "unknown";
}

// ---- MemoryRegion ----

tcaResult MemoryRegion::map(const UcpContext& context, void* address, size_t bytes,
                            ucs_memory_type_t type, MemoryRegion* out) {
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "ucp_mem_map: zero bytes at {}", address);
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = address;
  params.length = bytes;
  if (type != UCS_MEMORY_TYPE_UNKNOWN) {
    params.field_mask |= UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    params.memory_type = type;
  }
  MemoryRegion made;
  TCA_UCX_CHECK(ucp_mem_map(context.get(), &params, &made.memh_),
                "ucp_mem_map ({} bytes of {} memory at {})", bytes, memory_type_name(type),
                address);
  made.context_ = context.get();
  made.address_ = address;
  made.bytes_ = bytes;
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_MEM_TYPE;
  TCA_UCX_CHECK(ucp_mem_query(made.memh_, &attr), "ucp_mem_query");
  made.type_ = attr.mem_type;
  *out = std::move(made);
  return TCA_SUCCESS;
}

MemoryRegion::MemoryRegion(MemoryRegion&& other) noexcept
    : context_(other.context_),
      memh_(std::exchange(other.memh_, nullptr)),
      address_(other.address_),
      bytes_(other.bytes_),
      type_(other.type_) {}

MemoryRegion& MemoryRegion::operator=(MemoryRegion&& other) noexcept {
  if (this != &other) {
    release();
    context_ = other.context_;
    memh_ = std::exchange(other.memh_, nullptr);
    address_ = other.address_;
    bytes_ = other.bytes_;
    type_ = other.type_;
  }
  return *this;
}

MemoryRegion::~MemoryRegion() { release(); }

void MemoryRegion::release() {
  if (memh_ != nullptr) ucp_mem_unmap(context_, std::exchange(memh_, nullptr));
}

tcaResult MemoryRegion::pack_rkey(std::vector<uint8_t>* out) const {
  void* packed = nullptr;
  size_t size = 0;
  TCA_UCX_CHECK(ucp_rkey_pack(context_, memh_, &packed, &size), "ucp_rkey_pack");
  const auto* bytes = static_cast<const uint8_t*>(packed);
  out->assign(bytes, bytes + size);
  ucp_rkey_buffer_release(packed);
  return TCA_SUCCESS;
}

// ---- RemoteKey ----

tcaResult RemoteKey::unpack(ucp_ep_h ep, const void* packed, size_t bytes, RemoteKey* out) {
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "ucp_ep_rkey_unpack: an empty key");
  RemoteKey made;
  TCA_UCX_CHECK(ucp_ep_rkey_unpack(ep, packed, made.rkey_.slot()), "ucp_ep_rkey_unpack ({} bytes)",
                bytes);
  *out = std::move(made);
  return TCA_SUCCESS;
}

}  // namespace tca::ucx
