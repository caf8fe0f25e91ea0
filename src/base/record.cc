// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The region records of the control block (base/region.h): written by the owner, read by every
// transport that reaches it.
#include <atomic>
#include <cstring>

#include "base/region.h"

namespace tca {
namespace {

std::atomic<uint64_t>* word_at(unsigned char* block, uint64_t offset) {
  return reinterpret_cast<std::atomic<uint64_t>*>(block + offset);
}
const std::atomic<uint64_t>* word_at(const unsigned char* block, uint64_t offset) {
  return reinterpret_cast<const std::atomic<uint64_t>*>(block + offset);
}

void encode(const RegionRecord& record, uint64_t (&words)[kRecordWords]) {
  words[0] = record.id;
  words[1] = record.bytes;
  words[2] = record.address;
  words[3] = uint64_t{record.kind} | uint64_t{record.mappable} << 8 |
             uint64_t{static_cast<uint32_t>(record.memfd)} << 32;
  words[4] = record.memfd_serial;
  words[5] = record.memfd_offset;
  words[6] = record.memfd_inode;
  words[7] = record.device_offset;
  std::memcpy(&words[8], record.device_ipc, sizeof(record.device_ipc));
  std::memcpy(&words[16], record.handle_digest, sizeof(record.handle_digest));
}

}  // namespace

static_assert(sizeof(RegionRecord::device_ipc) == 8 * sizeof(uint64_t) &&
                  sizeof(RegionRecord::handle_digest) == 4 * sizeof(uint64_t) && kRecordWords == 20,
              "record layout");

RegionRecord decode_record(const uint64_t (&words)[kRecordWords]) {
  RegionRecord record;
  record.id = words[0];
  record.bytes = words[1];
  record.address = words[2];
  record.kind = static_cast<uint8_t>(words[3] & 0xff);
  record.mappable = static_cast<uint8_t>((words[3] >> 8) & 0xff);
  record.memfd = static_cast<int32_t>(static_cast<uint32_t>(words[3] >> 32));
  record.memfd_serial = static_cast<uint32_t>(words[4]);
  record.memfd_offset = words[5];
  record.memfd_inode = words[6];
  record.device_offset = words[7];
  std::memcpy(record.device_ipc, &words[8], sizeof(record.device_ipc));
  std::memcpy(record.handle_digest, &words[16], sizeof(record.handle_digest));
  return record;
}

bool read_record(const unsigned char* control_block, uint64_t id, RegionRecord* out) {
  const uint64_t base = record_offset(id);
  if (word_at(control_block, base)->load(std::memory_order_acquire) != id) return false;
  uint64_t words[kRecordWords];
  words[0] = id;
  for (uint64_t i = 1; i < kRecordWords; ++i)
    words[i] = word_at(control_block, base + i * sizeof(uint64_t))->load(std::memory_order_relaxed);
  // Any word rewritten after the id was withdrawn shows as a changed liveness cell here.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (word_at(control_block, base)->load(std::memory_order_relaxed) != id) return false;
  *out = decode_record(words);
  return true;
}

void publish_record(unsigned char* control_block, const RegionRecord& record) {
  const uint64_t base = record_offset(record.id);
  uint64_t words[kRecordWords];
  encode(record, words);
  for (uint64_t i = 1; i < kRecordWords; ++i)
    word_at(control_block, base + i * sizeof(uint64_t))->store(words[i], std::memory_order_relaxed);
  word_at(control_block, base)->store(record.id, std::memory_order_release);
}

}  // namespace tca
