// The bytes of a tcaHandle: what a peer needs to find, check and reach a registered region.
#pragma once

#include <cstdint>

#include "tca/tca.h"

namespace tca {

constexpr uint32_t kHandleMagic = 0x31414354;  // "TCA1"
constexpr uint16_t kHandleVersion = 1;

// Host byte order: every rank of a job runs on the same architecture.
struct WireHandle {
  uint32_t magic;
  uint16_t version;
  uint8_t kind;     // tcaMemKind
  uint8_t mappable; // 1: backed by a memfd that same-host peers can map
  int32_t owner;
  int32_t owner_pid;
  uint64_t job_key;
  uint64_t region_id;
  uint64_t bytes;
  uint64_t address;       // base address in the owner's process
  int32_t memfd;          // owner's descriptor of the backing memfd, -1 if none
  uint32_t memfd_serial;  // names the memfd, so a reused fd number is never mistaken for it
  uint64_t memfd_offset;  // where the region starts inside the memfd
  uint8_t device_ipc[64]; // device-memory export (GPU regions)
  uint64_t device_offset; // where the region starts inside the exported allocation
  uint8_t reserved1[48];
  uint64_t checksum;      // over every byte above
};
static_assert(sizeof(WireHandle) == TCA_HANDLE_BYTES, "wire handle must fill tcaHandle");

uint64_t handle_checksum(const WireHandle& wire);
void seal_handle(WireHandle& wire);          // fills magic, version and checksum
tcaHandle to_public(const WireHandle& wire);
// Decodes and checks the bytes alone (format, checksum, job key); not liveness or bounds.
tcaResult decode_handle(const tcaHandle* handle, uint64_t job_key, int world_size,
                        WireHandle* wire);

}  // namespace tca
