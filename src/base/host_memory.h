// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Host memory that same-host peers can map: each block is its own memfd (mode 0600), so it has no
// name in /dev/shm at all (nothing to unlink, nothing left behind when a rank is killed). Peers
// open it through /proc/<owner pid>/fd/<fd>, which the kernel grants only to processes that may
// trace the owner: the same user (and not even that where ptrace is restricted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tca/tca.h"

namespace tca {

// Fails with TCA_ERROR_INVALID_ARGUMENT unless every page of [begin, begin+bytes) is mapped
// readable and writable in this process now.
tcaResult check_read_write_mapped(uintptr_t begin, size_t bytes);

// The name of memfd `serial` of rank `owner` in the job of `job_key` (serial 0 is the control
// block); a peer maps a memfd only under its exact name.
std::string host_memfd_name(uint64_t job_key, int owner, uint32_t serial);

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
  uint64_t inode() const { return inode_; }  // the memfd's identity, checked by peers

 private:
  void release();
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;  // as mapped (whole pages)
  int fd_ = -1;
  uint64_t inode_ = 0;
};

// RAII mapping of a peer's memfd range, opened through /proc. Move-only.
class PeerMapping {
 public:
  PeerMapping() = default;
  // Maps [offset, offset+bytes) of memfd `fd` of process `pid`. The descriptor must name
  // exactly the memfd `expected_name` and be the file `expected_inode`, and the range must lie
  // inside it; otherwise TCA_ERROR_FREED_HANDLE and nothing is mapped.
  static tcaResult open(int pid, int fd, uint64_t offset, uint64_t bytes, const char* expected_name,
                        uint64_t expected_inode, PeerMapping* out);
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
