// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The Context's memory and regions: tcaMalloc/tcaFree, handles created, imported (checked
// against the owner's record), withdrawn once the transfers in flight into them are done.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "base/log.h"
#include "core/cells.h"
#include "core/context.h"
#include "transport/registry.h"

namespace tca {

tcaResult Context::malloc_memory(void** ptr, size_t bytes, tcaMemKind kind) {
  if (ptr == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "ptr is NULL");
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "tcaMalloc of 0 bytes");
  if (kind != TCA_MEM_CPU && kind != TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown memory kind {}", static_cast<int>(kind));
  TCA_CHECK(domains_[kind]->allocate(bytes, ptr));
  // E.g. host blocks are pinned and mapped for the GPU engines, as cudaHostAlloc memory is.
  for (const auto& other : domains_)
    if (other->kind() != kind) other->allocated_elsewhere(*ptr, bytes);
  return TCA_SUCCESS;
}

tcaResult Context::free_memory(void* ptr) {
  if (ptr == nullptr) return TCA_SUCCESS;  // like free(NULL)
  MemoryDomain* owner = nullptr;
  size_t bytes = 0;
  for (const auto& domain : domains_)
    if (owner == nullptr && domain->find_allocation(ptr, &bytes)) owner = domain.get();
  if (owner == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} was not returned by tcaMalloc (or is freed)", ptr);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t end = begin + bytes;
  tcaResult drained = TCA_SUCCESS;
  for (auto it = own_regions_.begin(); it != own_regions_.end();) {
    PeerRegion& region = *it->second;
    if (region.kind == owner->kind() && region.address >= begin && region.address < end) {
      const tcaResult result = unpublish(region);
      if (drained == TCA_SUCCESS) drained = result;
      it = own_regions_.erase(it);
    } else {
      ++it;
    }
  }
  // A peer that outlived the timeout mid-transfer writes, if at all, into memory this process
  // no longer maps (a memfd's pages stay with that peer's mapping): the block goes anyway.
  for (const auto& other : domains_)
    if (other.get() != owner) other->releasing_elsewhere(ptr);
  TCA_CHECK(owner->release(ptr));
  return drained == TCA_SUCCESS ? TCA_SUCCESS : append_frame(drained, __FILE__, __LINE__);
}

tcaResult Context::create_handle(void* ptr, size_t bytes, tcaMemKind kind, tcaHandle* out) {
  if (out == nullptr || ptr == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "handle or ptr is NULL");
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "region of 0 bytes");
  if (kind != TCA_MEM_CPU && kind != TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown memory kind {}", static_cast<int>(kind));
  if (const std::string why = domains_[kind]->unavailable_reason(); !why.empty())
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "{}", why);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  if (bytes > UINTPTR_MAX - begin)
    TCA_FAIL(TCA_ERROR_SIZE_OVERFLOW, "region {} + {} bytes wraps the address space", ptr, bytes);

  auto region = std::make_unique<PeerRegion>();
  WireHandle& wire = region->wire;
  wire.memfd = -1;
  TCA_CHECK(domains_[kind]->export_range(ptr, bytes, region.get()));

  // Region ids are chosen so that each owns a free record slot of the control block.
  uint64_t id = 0;
  for (int tries = 0; tries < kMaxLiveRegions && id == 0; ++tries) {
    const uint64_t candidate = next_region_id_++;
    if (cell_at(control_block(), live_cell_offset(candidate))->load(std::memory_order_relaxed) == 0)
      id = candidate;
  }
  if (id == 0)
    TCA_FAIL(TCA_ERROR_OUT_OF_RESOURCES, "{} regions are registered already", kMaxLiveRegions);

  region->owner = rank_;
  region->owner_pid = peers_[rank_].pid;
  region->id = id;
  region->bytes = bytes;
  region->kind = kind;
  region->address = begin;
  // The host cannot store into device memory: GPU regions are reached by the GPU engines.
  region->mapped = kind == TCA_MEM_CPU ? static_cast<unsigned char*>(ptr) : nullptr;
  wire.kind = static_cast<uint8_t>(kind);
  wire.owner = rank_;
  wire.owner_pid = region->owner_pid;
  wire.job_key = job_key_;
  wire.region_id = id;
  wire.bytes = bytes;
  wire.address = begin;
  TCA_CHECK(register_with_transports(*region));  // each may append its record to the handle
  seal_handle(wire);

  cell_at(control_block(), issued_id_offset(size_))
      ->store(next_region_id_ - 1, std::memory_order_relaxed);
  publish_record(control_block(), record_of(*region));
  PeerRegion* published = region.get();
  known_regions_[{rank_, id}] = std::move(region);
  own_regions_[id] = published;
  *out = to_public(published->wire);
  return TCA_SUCCESS;
}

RegionRecord Context::record_of(const PeerRegion& region) const {
  RegionRecord record;
  record.id = region.id;
  record.bytes = region.bytes;
  record.address = region.address;
  record.kind = region.wire.kind;
  record.mappable = region.wire.mappable;
  record.memfd = region.wire.memfd;
  record.memfd_serial = region.wire.memfd_serial;
  record.memfd_offset = region.wire.memfd_offset;
  record.memfd_inode = region.memfd_inode;
  record.device_offset = region.wire.device_offset;
  std::memcpy(record.device_ipc, region.wire.device_ipc, sizeof(record.device_ipc));
  handle_digest(region.wire, record.handle_digest);
  return record;
}

tcaResult Context::register_with_transports(PeerRegion& region) {
  for (size_t i = 0; i < transports_.size(); ++i) {
    const tcaResult result = transports_[i]->register_region(region, &region.wire);
    if (result != TCA_SUCCESS) {
      while (i-- > 0) transports_[i]->deregister_region(region);
      return append_frame(result, __FILE__, __LINE__);
    }
  }
  return TCA_SUCCESS;
}

tcaResult Context::unpublish(PeerRegion& region) {
  // Withdraw the record first: a peer that announces a transfer after this sees the region
  // gone and writes nothing; one that announced it before is waited for.
  cell_at(control_block(), live_cell_offset(region.id))->store(0, std::memory_order_seq_cst);
  const tcaResult drained = await_transfers_in_flight(region);
  for (auto& transport : transports_) transport->deregister_region(region);
  region.mapped = nullptr;  // the memory may go away now; liveness checks stop every use
  return drained;
}

tcaResult Context::await_transfers_in_flight(const PeerRegion& region) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  struct Pending {
    int peer;
    int lane;
    uint64_t begun;
  };
  std::vector<Pending> pending;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    for (int lane = 0; lane < kInflightLanes; ++lane) {
      const uint64_t begun =
          cell_at(control_block(), inflight_cell_offset(size_, peer, lane, false))
              ->load(std::memory_order_acquire);
      if (inflight_done(peer, lane) < begun) pending.push_back({peer, lane, begun});
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  while (!pending.empty()) {
    // A transfer may need this rank inside MPI to complete (and to make its done cell visible).
    TCA_CHECK(progress_transports());
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [&](const Pending& p) {
                                   return inflight_done(p.peer, p.lane) >= p.begun ||
                                          check_peer_alive(p.peer) !=
                                              TCA_SUCCESS;  // its writes ended with it
                                 }),
                  pending.end());
    if (pending.empty()) break;
    if (Clock::now() > deadline)
      TCA_FAIL(TCA_ERROR_TIMEOUT,
               "region {} is withdrawn, but a transfer of rank {} into it was "
               "still in flight after {} ms",
               region.id, pending.front().peer, timeout_ms_);
    sched_yield();
  }
  clear_last_error();  // dead peers were an answer, not a failure
  return TCA_SUCCESS;
}

uint64_t Context::inflight_done(int peer, int lane) {
  return cell_at(control_block(), inflight_cell_offset(size_, peer, lane, true))
      ->load(std::memory_order_acquire);
}

tcaResult Context::decode(const tcaHandle* handle, WireHandle* wire) {
  if (handle == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "handle is NULL");
  for (int i = 0; i < decoded_count_; ++i)
    if (std::memcmp(&decoded_[i], handle->bytes, sizeof(WireHandle)) == 0) {
      *wire = decoded_[i];
      return TCA_SUCCESS;
    }
  TCA_CHECK(decode_handle(handle, job_key_, size_, handle_record_ids(), wire));
  decoded_[decoded_next_] = *wire;
  decoded_next_ = (decoded_next_ + 1) % kDecodedHandles;
  decoded_count_ = std::min(decoded_count_ + 1, kDecodedHandles);
  return TCA_SUCCESS;
}

tcaResult Context::destroy_handle(const tcaHandle* handle) {
  WireHandle wire;
  TCA_CHECK(decode(handle, &wire));
  if (wire.owner != rank_)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "region {} belongs to rank {}; only its owner ({}) may "
             "destroy it",
             wire.region_id, wire.owner, rank_);
  const auto found = own_regions_.find(wire.region_id);
  if (found == own_regions_.end())
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is already freed", wire.region_id,
             rank_);
  if (std::memcmp(&found->second->wire, &wire, sizeof(wire)) != 0)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle of region {} differs from its registration",
             wire.region_id);
  PeerRegion& region = *found->second;
  own_regions_.erase(found);
  return unpublish(region);
}

tcaResult Context::resolve(const tcaHandle* handle, PeerRegion** out, bool liveness) {
  WireHandle wire;
  TCA_CHECK(decode(handle, &wire));
  if (wire.owner == rank_) {
    const auto found = own_regions_.find(wire.region_id);
    if (found == own_regions_.end() && (wire.region_id == 0 || wire.region_id >= next_region_id_))
      TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "rank {} never registered a region {}", rank_,
               wire.region_id);
    if (found == own_regions_.end())
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", wire.region_id, rank_);
    if (std::memcmp(&found->second->wire, &wire, sizeof(wire)) != 0)
      TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle of region {} differs from its registration",
               wire.region_id);
    *out = found->second;
    return TCA_SUCCESS;
  }
  const auto known = known_regions_.find({wire.owner, wire.region_id});
  if (known == known_regions_.end()) return import_region(wire, out);
  // Imported before, after the owner's record vouched for those bytes; other bytes are asked
  // about again, so that what was shown first never decides alone.
  if (std::memcmp(&known->second->wire, &wire, sizeof(wire)) != 0)
    return refuse_unlike_import(wire);
  bool alive = true;
  if (liveness) TCA_CHECK(region_alive(*known->second, &alive));
  if (!alive)
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", wire.region_id, wire.owner);
  *out = known->second.get();
  return TCA_SUCCESS;
}

// First use of a peer's region: its owner's record, not the handle, says what it is; the
// handle must agree with it in every field. Nothing is kept unless the import succeeds.
tcaResult Context::import_region(const WireHandle& wire, PeerRegion** out) {
  RegionRecord record;
  bool found = false;
  uint64_t issued = 0;
  TCA_CHECK(
      controller_[wire.owner]->read_record(wire.owner, wire.region_id, &record, &found, &issued));
  if (!found && (wire.region_id == 0 || wire.region_id > issued))
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE,
             "rank {} never registered a region {} (it issued ids up "
             "to {})",
             wire.owner, wire.region_id, issued);
  if (!found)
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", wire.region_id, wire.owner);
  TCA_CHECK(check_against_record(wire, record));
  auto region = std::make_unique<PeerRegion>();
  region->owner = wire.owner;
  region->owner_pid = peers_[wire.owner].pid;
  region->id = record.id;
  region->bytes = record.bytes;
  region->kind = static_cast<tcaMemKind>(record.kind);
  region->address = record.address;
  region->memfd_inode = record.memfd_inode;
  region->wire = wire;
  for (auto& transport : transports_)
    if (transport->can_reach(wire.owner, TCA_MEM_CPU, region->kind) ||
        transport->can_reach(wire.owner, TCA_MEM_GPU, region->kind))
      TCA_CHECK(transport->attach(*region));
  PeerRegion* imported = region.get();
  known_regions_[{wire.owner, wire.region_id}] = std::move(region);
  *out = imported;
  return TCA_SUCCESS;
}

// A handle of an imported region whose bytes differ from the import's: checked against the
// owner's record as a first import would be. The import holds the only bytes with the owner's
// digest, so the record refuses it (or says the region is freed); were it accepted, the import
// and the record would disagree, which nothing but a fault here can do.
tcaResult Context::refuse_unlike_import(const WireHandle& wire) {
  RegionRecord record;
  bool found = false;
  uint64_t issued = 0;
  TCA_CHECK(
      controller_[wire.owner]->read_record(wire.owner, wire.region_id, &record, &found, &issued));
  if (!found)
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", wire.region_id, wire.owner);
  TCA_CHECK(check_against_record(wire, record));
  TCA_FAIL(TCA_ERROR_INTERNAL,
           "region {} of rank {} was imported from bytes its owner's record "
           "does not vouch for",
           wire.region_id, wire.owner);
}

tcaResult Context::check_against_record(const WireHandle& wire, const RegionRecord& record) const {
  const char* differs = nullptr;
  if (wire.bytes != record.bytes)
    differs = "size";
  else if (wire.address != record.address)
    differs = "base address";
  else if (wire.kind != record.kind)
    differs = "memory kind";
  else if (wire.mappable != record.mappable)
    differs = "mappable flag";
  else if (wire.memfd != record.memfd || wire.memfd_serial != record.memfd_serial ||
           wire.memfd_offset != record.memfd_offset)
    differs = "memfd";
  else if (wire.device_offset != record.device_offset ||
           std::memcmp(wire.device_ipc, record.device_ipc, sizeof(record.device_ipc)) != 0)
    differs = "device export";
  else if (wire.owner_pid != peers_[wire.owner].pid)
    differs = "owner process";
  if (differs == nullptr) {
    // The fields agree; the digest decides the rest (the transport records above all).
    HandleDigest digest;
    handle_digest(wire, digest);
    if (std::memcmp(digest, record.handle_digest, kHandleDigestBytes) != 0)
      differs = "digest of its bytes, transport records included,";
  }
  if (differs != nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE,
             "handle of region {} of rank {} does not match its owner's "
             "record ({} differs): forged or corrupted",
             wire.region_id, wire.owner, differs);
  return TCA_SUCCESS;
}

tcaResult Context::region_alive(const PeerRegion& region, bool* alive) {
  if (region.owner == rank_) {
    *alive =
        cell_at(control_block(), live_cell_offset(region.id))->load(std::memory_order_acquire) ==
        region.id;
    return TCA_SUCCESS;
  }
  return controller_[region.owner]->region_alive(region, alive);
}

}  // namespace tca
