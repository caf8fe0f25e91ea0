// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Registered regions as the core and the transports see them, and the layout of the control
// block through which every transport that reaches a rank reads its regions' records, raises its
// notifications and announces its transfers in flight.
#pragma once

#include <array>
#include <cstdint>

#include "base/handle.h"
#include "tca/tca.h"

namespace tca {

// Transports a build may have (ids 0 .. kMaxTransports-1, in the registry's order); each one
// announces its transfers in flight on the lane of its id.
constexpr int kMaxTransports = 8;

// One registered region as any rank knows it: the owner's own registration, or an import.
// An import's fields come from the owner's record (never from handle bytes alone).
struct PeerRegion {
  int owner = -1;
  int owner_pid = 0;
  uint64_t id = 0;
  uint64_t bytes = 0;
  tcaMemKind kind = TCA_MEM_CPU;
  uint64_t address = 0;             // base in the owner's address space
  unsigned char* mapped = nullptr;  // base in this process, when it can load/store directly
  WireHandle wire{};                // the region's handle, as its owner issued it
  uint64_t memfd_inode = 0;         // identity of the backing memfd (mappable host regions)
  // Transport-private state of the registration or import (e.g. an mmap to undo, a UCX remote
  // key), indexed by transport id (the registry's order); owned by that transport.
  std::array<void*, kMaxTransports> state{};
};

// ---- the control block: one per rank, in memory every transport can expose to peers ----
//
// [ region records: kMaxLiveRegions x kRecordBytes ]
// [ notification cells: world x TCA_NOTIFY_SLOTS words; cell (src, slot) written by src only ]
// [ in-flight cells: world x kInflightLanes x {begun, done}; written by that peer only ]
// [ wake word: 32-bit futex word, 32-bit count of sleepers; then the highest region id issued ]
//
// Record of region `id` sits at slot id % kMaxLiveRegions. Its first word is the liveness cell:
// the id while registered, 0 otherwise. The owner writes the other words only while the cell is
// 0, then publishes the id with a release store, so a reader that sees the id before and after
// reading the words (a sequence lock whose sequence is the never-reused id) read a whole record.
constexpr int kMaxLiveRegions = 4096;
constexpr uint64_t kRecordWords = 20;
constexpr uint64_t kRecordBytes = kRecordWords * sizeof(uint64_t);
// In-flight lanes per peer: each transport announces its transfers on the lane of its id.
constexpr int kInflightLanes = kMaxTransports;

// The owner's authoritative description of one region (the record's words, decoded).
struct RegionRecord {
  uint64_t id = 0;  // 0: the slot holds no live region
  uint64_t bytes = 0;
  uint64_t address = 0;
  uint8_t kind = 0;
  uint8_t mappable = 0;
  int32_t memfd = -1;
  uint32_t memfd_serial = 0;
  uint64_t memfd_offset = 0;
  uint64_t memfd_inode = 0;
  uint64_t device_offset = 0;
  uint8_t device_ipc[64] = {};
  // The digest of the handle the owner issued (handle_digest: BLAKE2b-256 of its 512 bytes):
  // an import accepts only bytes with this digest, i.e. the owner's exact bytes, records
  // included. A peer cannot steer it, unlike the handle's own CRC.
  uint8_t handle_digest[kHandleDigestBytes] = {};
};

inline uint64_t record_offset(uint64_t region_id) {
  return kRecordBytes * (region_id % kMaxLiveRegions);
}
inline uint64_t live_cell_offset(uint64_t region_id) { return record_offset(region_id); }
constexpr uint64_t kRecordsBytes = kRecordBytes * kMaxLiveRegions;
// The notification cell written by `src` for `slot`.
inline uint64_t notify_cell_offset(int src, int slot) {
  return kRecordsBytes + sizeof(uint64_t) * (static_cast<uint64_t>(src) * TCA_NOTIFY_SLOTS +
                                             static_cast<uint64_t>(slot));
}
// The begun (`done` false) or done cell of (`peer`, `lane`) in a control block of `world` ranks.
inline uint64_t inflight_cell_offset(int world, int peer, int lane, bool done) {
  return notify_cell_offset(world, 0) +
         sizeof(uint64_t) *
             (2 * (static_cast<uint64_t>(peer) * kInflightLanes + lane) + (done ? 1 : 0));
}
inline uint64_t wake_word_offset(int world) { return inflight_cell_offset(world, world, 0, false); }
inline uint64_t sleepers_offset(int world) { return wake_word_offset(world) + 4; }
inline uint64_t issued_id_offset(int world) { return wake_word_offset(world) + 8; }
inline uint64_t control_block_bytes(int world) { return wake_word_offset(world) + 16; }

// Reads the record of region `id` from a control block mapped here. False when the slot holds
// another region (or none) or changed while it was read.
bool read_record(const unsigned char* control_block, uint64_t id, RegionRecord* out);
// Writes `record` into its slot and publishes it (the slot must hold no live region).
void publish_record(unsigned char* control_block, const RegionRecord& record);
// Decodes a record fetched as raw words (e.g. by an RMA get).
RegionRecord decode_record(const uint64_t (&words)[kRecordWords]);

}  // namespace tca
