// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "base/handle.h"

#include <cstring>

#include "base/blake2b.h"
#include "base/crc64.h"
#include "base/error.h"

namespace tca {
namespace {

constexpr size_t kRecordHeaderBytes = 4;

size_t padded(size_t bytes) { return (bytes + 7) & ~size_t{7}; }

struct RecordHeader {
  uint8_t id;
  uint8_t zero;
  uint16_t length;
};
static_assert(sizeof(RecordHeader) == kRecordHeaderBytes, "record header");

// Walks the records of `wire`; `visit(header, payload)` returns true to stop. False when the
// framing is broken (a record runs past records_bytes, or a header's zero byte is not zero).
template <typename Visit>
bool walk_records(const WireHandle& wire, Visit visit) {
  size_t at = 0;
  while (at < wire.records_bytes) {
    if (wire.records_bytes - at < kRecordHeaderBytes) return false;
    RecordHeader header;
    std::memcpy(&header, wire.records + at, sizeof(header));
    const size_t whole = padded(kRecordHeaderBytes + header.length);
    if (header.zero != 0 || whole > wire.records_bytes - at) return false;
    for (size_t pad = kRecordHeaderBytes + header.length; pad < whole; ++pad)
      if (wire.records[at + pad] != 0) return false;  // one spelling per record
    if (visit(header, wire.records + at + kRecordHeaderBytes)) return true;
    at += whole;
  }
  return true;
}

}  // namespace

uint64_t handle_checksum(const WireHandle& wire) {
  return crc64(&wire, offsetof(WireHandle, checksum));
}

void handle_digest(const WireHandle& wire, HandleDigest out) {
  blake2b(&wire, sizeof(wire), out, kHandleDigestBytes);
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

tcaResult append_handle_record(WireHandle& wire, int id, const void* payload, size_t bytes) {
  if (id < 0 || id > UINT8_MAX)
    TCA_FAIL(TCA_ERROR_INTERNAL, "transport id {} does not fit a handle record", id);
  const size_t whole = padded(kRecordHeaderBytes + bytes);
  if (bytes > UINT16_MAX || whole > kHandleRecordsBytes - wire.records_bytes)
    TCA_FAIL(TCA_ERROR_OUT_OF_RESOURCES,
             "a handle record of {} bytes does not fit: {} of {} "
             "record bytes are in use",
             bytes, wire.records_bytes, kHandleRecordsBytes);
  const RecordHeader header{static_cast<uint8_t>(id), 0, static_cast<uint16_t>(bytes)};
  uint8_t* at = wire.records + wire.records_bytes;
  std::memcpy(at, &header, sizeof(header));
  if (bytes > 0) std::memcpy(at + kRecordHeaderBytes, payload, bytes);
  std::memset(at + kRecordHeaderBytes + bytes, 0, whole - kRecordHeaderBytes - bytes);
  wire.records_bytes = static_cast<uint16_t>(wire.records_bytes + whole);
  return TCA_SUCCESS;
}

void find_handle_record(const WireHandle& wire, int id, const uint8_t** payload, size_t* bytes) {
  *payload = nullptr;
  *bytes = 0;
  walk_records(wire, [&](const RecordHeader& header, const uint8_t* data) {
    if (header.id != id) return false;
    *payload = data;
    *bytes = header.length;
    return true;
  });
}

tcaResult decode_handle(const tcaHandle* handle, uint64_t job_key, int world_size,
                        uint32_t record_ids, WireHandle* wire) {
  if (handle == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "handle is NULL");
  std::memcpy(wire, handle->bytes, sizeof(*wire));
  if (wire->magic != kHandleMagic || wire->version != kHandleVersion)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE,
             "handle has magic {:#x} version {}, not a tca handle of "
             "format {}",
             wire->magic, wire->version, kHandleVersion);
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
  if (wire->records_bytes > kHandleRecordsBytes || wire->records_bytes % 8 != 0 ||
      !walk_records(*wire, [](const RecordHeader&, const uint8_t*) { return false; }))
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle's transport records are malformed ({} bytes)",
             wire->records_bytes);
  for (size_t i = wire->records_bytes; i < kHandleRecordsBytes; ++i)
    if (wire->records[i] != 0)
      TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle has non-zero bytes after its transport records");
  // Only transports of this build that write records, each at most once.
  uint32_t seen = 0;
  int refused = -1;
  bool twice = false;
  walk_records(*wire, [&](const RecordHeader& header, const uint8_t*) {
    const uint32_t bit = header.id < 32 ? uint32_t{1} << header.id : 0;
    if ((bit & record_ids) == 0 || (bit & seen) != 0) {
      refused = header.id;
      twice = (bit & seen) != 0;
      return true;
    }
    seen |= bit;
    return false;
  });
  if (refused >= 0)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE,
             "handle of region {} of rank {} has {} record of transport "
             "id {}{}",
             wire->region_id, wire->owner, twice ? "a second" : "a", refused,
             twice ? "" : ", which writes no records in this build");
  return TCA_SUCCESS;
}

}  // namespace tca
