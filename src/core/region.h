// Registered regions as the core and the transports see them.
#pragma once

#include <cstdint>

#include "core/handle.h"
#include "tca/tca.h"

namespace tca {

// Control-block layout shared by every transport: peers write notification cells and read
// region liveness here. One per rank, in memory every transport can expose to peers.
constexpr int kMaxLiveRegions = 4096;

// One registered region as any rank knows it: the owner's own registration, or an import.
struct PeerRegion {
  int owner = -1;
  int owner_pid = 0;
  uint64_t id = 0;
  uint64_t bytes = 0;
  tcaMemKind kind = TCA_MEM_CPU;
  uint64_t address = 0;          // base in the owner's address space
  unsigned char* mapped = nullptr; // base in this process, when it can load/store directly
  WireHandle wire{};             // what the owner published (transports read their fields)
  // Transport-private state of the import (e.g. an mmap to undo); owned by that transport.
  void* shm_state = nullptr;
  void* device_state = nullptr;
};

// The notification cell written by `src` for `slot`, inside a control block of `world` ranks.
inline uint64_t notify_cell_offset(int src, int slot) {
  return sizeof(uint64_t) * (kMaxLiveRegions + static_cast<uint64_t>(src) * TCA_NOTIFY_SLOTS +
                             static_cast<uint64_t>(slot));
}
inline uint64_t live_cell_offset(uint64_t region_id) {
  return sizeof(uint64_t) * (region_id % kMaxLiveRegions);
}
inline uint64_t control_block_bytes(int world) {
  return sizeof(uint64_t) * (kMaxLiveRegions + static_cast<uint64_t>(world) * TCA_NOTIFY_SLOTS);
}

}  // namespace tca
