#include "core/handle.h"

#include <cstddef>
#include <cstring>

#include "core/error.h"

namespace tca {

uint64_t handle_checksum(const WireHandle& wire) {
  // FNV-1a over the bytes before the checksum, then a finalizing mix so that single-bit
  // corruption anywhere changes many bits of the result.
  const auto* bytes = reinterpret_cast<const unsigned char*>(&wire);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < offsetof(WireHandle, checksum); ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdull;
  hash ^= hash >> 33;
  return hash;
}

void seal_handle(WireHandle& wire) {
  wire.magic = kHandleMagic;
  wire.version = kHandleVersion;
  wire.checksum = handle_checksum(wire);
}

tcaHandle to_public(const WireHandle& wire) {
  tcaHandle handle;
  std::memcpy(handle.bytes, &wire, sizeof(wire));
  return handle;
}

tcaResult decode_handle(const tcaHandle* handle, uint64_t job_key, int world_size,
                        WireHandle* wire) {
  if (handle == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "handle is NULL");
  std::memcpy(wire, handle->bytes, sizeof(*wire));
  if (wire->magic != kHandleMagic || wire->version != kHandleVersion)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle has magic {:#x} version {}, not a tca handle",
             wire->magic, wire->version);
  if (wire->checksum != handle_checksum(*wire))
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle checksum mismatch (region {} of rank {})",
             wire->region_id, wire->owner);
  if (wire->job_key != job_key)
    TCA_FAIL(TCA_ERROR_FOREIGN_HANDLE, "handle of region {} has job key {:#x}, this job is {:#x}",
             wire->region_id, wire->job_key, job_key);
  if (wire->owner < 0 || wire->owner >= world_size)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle owner {} outside [0, {})", wire->owner, world_size);
  if (wire->kind != TCA_MEM_CPU && wire->kind != TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle has unknown memory kind {}", wire->kind);
  if (wire->mappable > 1)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle has mappable flag {}", wire->mappable);
  // One spelling per region: bytes a genuine handle leaves zero must be zero.
  for (uint8_t byte : wire->reserved1)
    if (byte != 0) TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle has non-zero reserved bytes");
  return TCA_SUCCESS;
}

}  // namespace tca
