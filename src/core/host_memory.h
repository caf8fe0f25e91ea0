// Host memory that same-host peers can map: each block is its own memfd, so it has no name in
// /dev/shm at all (nothing to unlink, nothing left behind when a rank is killed). Peers open it
// through /proc/<owner pid>/fd/<fd>, which needs the same user, as POSIX shm mode 0600 would.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tca/tca.h"

namespace tca {

// RAII owner of one memfd-backed shared mapping. Move-only.
class HostBlock {
 public:
  HostBlock() = default;
  static tcaResult create(size_t bytes, const char* name, HostBlock* out);
  HostBlock(HostBlock&& other) noexcept;
  HostBlock& operator=(HostBlock&& other) noexcept;
  HostBlock(const HostBlock&) = delete;
  HostBlock& operator=(const HostBlock&) = delete;
  ~HostBlock();

  unsigned char* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  int fd() const { return fd_; }

 private:
  void release();
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;  // as mapped (whole pages)
  int fd_ = -1;
};

// RAII mapping of a peer's memfd range, opened through /proc. Move-only.
class PeerMapping {
 public:
  PeerMapping() = default;
  // Maps [offset, offset+bytes) of memfd `fd` of process `pid`; `expected_name` must match
  // the memfd's name so that a reused descriptor number is never mapped by mistake.
  static tcaResult open(int pid, int fd, uint64_t offset, uint64_t bytes,
                        const char* expected_name, PeerMapping* out);
  PeerMapping(PeerMapping&& other) noexcept;
  PeerMapping& operator=(PeerMapping&& other) noexcept;
  PeerMapping(const PeerMapping&) = delete;
  PeerMapping& operator=(const PeerMapping&) = delete;
  ~PeerMapping();

  unsigned char* data() const { return data_; }  // points at `offset` of the memfd

 private:
  void release();
  void* base_ = nullptr;  // page-aligned start of the mapping
  size_t length_ = 0;
  unsigned char* data_ = nullptr;
};

}  // namespace tca
