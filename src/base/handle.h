// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The bytes of a tcaHandle: what a peer needs to find, check and reach a registered region.
// A fixed part (the region, and the export of the memory domain that owns it), then the records
// that transports append (e.g. a UCX remote key), then a CRC-64 over everything before it. The
// CRC only catches corruption; what makes a handle genuine is its digest (handle_digest), which
// the owner keeps in the region's record and every importer compares.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tca/tca.h"

namespace tca {

constexpr uint32_t kHandleMagic = 0x31414354;  // "TCA1"
constexpr uint16_t kHandleVersion = 3;         // 3: CRC-64, owner-kept digest; 512 bytes

// Where the transport records start, and how many bytes they may take in all.
constexpr size_t kHandleFixedBytes = 144;
constexpr size_t kHandleRecordsBytes = TCA_HANDLE_BYTES - kHandleFixedBytes - sizeof(uint64_t);

// Host byte order: every rank of a job runs on the same architecture.
struct WireHandle {
  uint32_t magic;
  uint16_t version;
  uint8_t kind;      // tcaMemKind
  uint8_t mappable;  // 1: backed by a memfd that same-host peers can map
  int32_t owner;
  int32_t owner_pid;
  uint64_t job_key;
  uint64_t region_id;
  uint64_t bytes;
  uint64_t address;        // base address in the owner's process
  int32_t memfd;           // owner's descriptor of the backing memfd, -1 if none
  uint32_t memfd_serial;   // names the memfd, so a reused fd number is never mistaken for it
  uint64_t memfd_offset;   // where the region starts inside the memfd
  uint8_t device_ipc[64];  // device-memory export (GPU regions)
  uint64_t device_offset;  // where the region starts inside the exported allocation
  uint16_t records_bytes;  // bytes of `records` in use
  uint8_t reserved1[6];
  // Transport records, back to back: {uint8 transport id, uint8 0, uint16 length, payload}, each
  // padded to 8 bytes; bytes after `records_bytes` are zero.
  uint8_t records[kHandleRecordsBytes];
  uint64_t checksum;  // CRC-64 (base/crc64.h) of every byte above
};
static_assert(sizeof(WireHandle) == TCA_HANDLE_BYTES, "wire handle must fill tcaHandle");
static_assert(offsetof(WireHandle, records) == kHandleFixedBytes, "handle layout");

// The digest that names a sealed handle's exact bytes: BLAKE2b-256 of all TCA_HANDLE_BYTES.
constexpr size_t kHandleDigestBytes = 32;
using HandleDigest = uint8_t[kHandleDigestBytes];

uint64_t handle_checksum(const WireHandle& wire);
void seal_handle(WireHandle& wire);  // fills magic, version and checksum
void handle_digest(const WireHandle& wire, HandleDigest out);
tcaHandle to_public(const WireHandle& wire);
// Decodes and checks the bytes alone (format, checksum, job key, record framing: every record's
// transport id among `record_ids`, a bit per id, and no id twice); not liveness, bounds or
// whether the owner issued these bytes.
tcaResult decode_handle(const tcaHandle* handle, uint64_t job_key, int world_size,
                        uint32_t record_ids, WireHandle* wire);

// Appends transport `id`'s record (before sealing); TCA_ERROR_OUT_OF_RESOURCES when it does not
// fit.
tcaResult append_handle_record(WireHandle& wire, int id, const void* payload, size_t bytes);
// Transport `id`'s record: *payload null and *bytes 0 when the handle has none.
void find_handle_record(const WireHandle& wire, int id, const uint8_t** payload, size_t* bytes);

}  // namespace tca
