// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The host memory domain: tcaMalloc blocks are memfds (so same-host peers can map them); user
// memory is registrable where this process can read and write it, never tca's own blocks.
#include <map>

#include "base/error.h"
#include "base/host_memory.h"
#include "domain/memory_domain.h"

namespace tca {
namespace {

class HostDomain final : public MemoryDomain {
 public:
  explicit HostDomain(const DomainSetup& setup) : setup_(setup) {}

  tcaMemKind kind() const override { return TCA_MEM_CPU; }
  const char* name() const override { return "host"; }
  std::string unavailable_reason() const override { return ""; }

  tcaResult allocate(size_t bytes, void** ptr) override {
    Block block;
    block.serial = next_serial_;
    TCA_CHECK(HostBlock::create(
        bytes, host_memfd_name(setup_.job_key, setup_.rank, block.serial).c_str(), &block.memory));
    ++next_serial_;
    *ptr = block.memory.data();
    blocks_.emplace(reinterpret_cast<uintptr_t>(*ptr), std::move(block));
    return TCA_SUCCESS;
  }

  bool find_allocation(const void* ptr, size_t* bytes) const override {
    const auto found = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
    if (found == blocks_.end()) return false;
    *bytes = found->second.memory.bytes();
    return true;
  }

  tcaResult release(void* ptr) override {
    if (blocks_.erase(reinterpret_cast<uintptr_t>(ptr)) == 0)
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} is not host memory from tcaMalloc", ptr);
    return TCA_SUCCESS;
  }

  bool contains(const void*) const override { return true; }  // what no other domain claims

  tcaResult export_range(void* ptr, size_t bytes, PeerRegion* region) override;

 private:
  struct Block {
    HostBlock memory;
    uint32_t serial = 0;  // names the memfd (serial 0 is the control block)
  };

  DomainSetup setup_;
  std::map<uintptr_t, Block> blocks_;  // by base address
  uint32_t next_serial_ = 1;
};

// Inside a tcaMalloc block the region is a memfd range same-host peers can map; the user's own
// memory must be readable and writable now, and never tca's own blocks.
tcaResult HostDomain::export_range(void* ptr, size_t bytes, PeerRegion* region) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  for (const HostBlock* internal : setup_.internal) {
    const auto first = reinterpret_cast<uintptr_t>(internal->data());
    if (begin < first + internal->bytes() && first < begin + bytes)
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "[{:#x}, +{}) overlaps tca's own control memory", begin,
               bytes);
  }
  auto block = blocks_.upper_bound(begin);
  if (block != blocks_.begin()) {
    --block;
    const uintptr_t block_end = block->first + block->second.memory.bytes();
    if (begin < block_end) {
      if (bytes > block_end - begin)
        TCA_FAIL(TCA_ERROR_OUT_OF_BOUNDS, "region {:#x} + {} bytes runs past its tcaMalloc block",
                 begin, bytes);
      region->wire.mappable = 1;
      region->wire.memfd = block->second.memory.fd();
      region->wire.memfd_serial = block->second.serial;
      region->wire.memfd_offset = begin - block->first;
      region->memfd_inode = block->second.memory.inode();
      return TCA_SUCCESS;
    }
  }
  return check_read_write_mapped(begin, bytes);
}

}  // namespace

tcaResult make_host_domain(const DomainSetup& setup, std::unique_ptr<MemoryDomain>* out) {
  *out = std::make_unique<HostDomain>(setup);
  return TCA_SUCCESS;
}

}  // namespace tca
