// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "core/desc.h"

#include <algorithm>

#include "base/error.h"
#include "base/trace.h"
#include "core/context.h"
#include "core/observe/observe.h"
#include "core/reserved.h"

namespace tca {

tcaResult DescRegistry::create(tcaDesc* out) {
  if (out == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "desc is NULL");
  // Tokens are odd multiples of 8 from a base that no allocator hands out, so they are never
  // mistaken for (or dereferenced as) memory.
  const uintptr_t token = (uintptr_t{0x7ca} << 44) + 8 * (2 * ++next_token_ + 1);
  descs_.emplace(token, std::make_unique<tcaDesc_st>());
  *out = reinterpret_cast<tcaDesc>(token);
  return TCA_SUCCESS;
}

tcaResult DescRegistry::find(tcaDesc desc, tcaDesc_st** out) const {
  const auto found = descs_.find(reinterpret_cast<uintptr_t>(desc));
  if (found == descs_.end())
    TCA_FAIL(TCA_ERROR_INVALID_DESC, "descriptor {} is not a live descriptor of this job",
             static_cast<const void*>(desc));
  *out = found->second.get();
  return TCA_SUCCESS;
}

tcaResult DescRegistry::destroy(Context& context, tcaDesc desc) {
  tcaDesc_st* found = nullptr;
  TCA_CHECK(find(desc, &found));
  for (auto& run : found->runs) {
    // A chain in flight still reads and writes its buffers; one whose peer died has ended
    // there (its operations failed with the connection), and it goes all the same.
    const tcaResult waited = run->wait();
    if (waited == TCA_ERROR_PEER_FAILED)
      clear_last_error();
    else
      TCA_CHECK(waited);
    context.forget_run(run.get());
  }
  if (found->unadded_kicks != 0 && observe::counting()) observe::add_kicks(*found);
  descs_.erase(reinterpret_cast<uintptr_t>(desc));
  return TCA_SUCCESS;
}

tcaResult check_extent(const PeerRegion& region, const char* end, uint64_t offset, uint64_t pitch,
                       uint64_t width, uint64_t count) {
  // extent = (count - 1) * pitch + width, computed without wrapping.
  uint64_t extent = width;
  if (count > 1) {
    const uint64_t blocks = count - 1;
    if (pitch != 0 && blocks > (UINT64_MAX - width) / pitch)
      TCA_FAIL(TCA_ERROR_SIZE_OVERFLOW, "{} extent of {} blocks of {} bytes at pitch {} overflows",
               end, count, width, pitch);
    extent = blocks * pitch + width;
  }
  if (offset > UINT64_MAX - extent)
    TCA_FAIL(TCA_ERROR_SIZE_OVERFLOW, "{} offset {} + extent {} overflows", end, offset, extent);
  if (offset + extent > region.bytes)
    TCA_FAIL(TCA_ERROR_OUT_OF_BOUNDS,
             "{} range [{}, {}) is outside region {} of rank {} ({} bytes)", end, offset,
             offset + extent, region.id, region.owner, region.bytes);
  return TCA_SUCCESS;
}

namespace {

void unbind(Context& context, tcaDesc_st& desc) {
  if (desc.unadded_kicks != 0 && observe::counting()) observe::add_kicks(desc);
  for (auto& run : desc.runs) context.forget_run(run.get());
  desc.runs.clear();
  desc.run_transports.clear();
  desc.transfer_transports.clear();
  desc.own_regions.clear();
  desc.counts.clear();
  desc.peers.clear();
  desc.kick_peers = {};
  desc.channel = -1;
}

}  // namespace

tcaResult check_own_regions_alive(Context& context, const tcaDesc_st& desc) {
  for (const PeerRegion* region : desc.own_regions) {
    bool alive = false;
    TCA_CHECK(context.region_alive(*region, &alive));
    if (!alive)
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "the chain uses region {} of this rank, which is freed",
               region->id);
  }
  return TCA_SUCCESS;
}

tcaResult desc_append(Context& context, tcaDesc_st& desc, const tcaHandle* dst, uint64_t dst_offset,
                      uint64_t dst_pitch, const tcaHandle* src, uint64_t src_offset,
                      uint64_t src_pitch, uint64_t width, uint64_t count, unsigned flags,
                      int slot) {
  if ((flags & ~TCA_FLAG_NOTIFY) != 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown transfer flags {:#x}", flags);
  if (flags & TCA_FLAG_NOTIFY) TCA_CHECK(check_slot(slot));
  if (count == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "block-stride transfer of 0 blocks");
  if (count > 1 && (dst_pitch < width || src_pitch < width))
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "pitches (dst {}, src {}) are narrower than width {}",
             dst_pitch, src_pitch, width);
  Transfer transfer;
  TCA_CHECK(context.resolve(dst, &transfer.dst));
  TCA_CHECK(context.resolve(src, &transfer.src));
  const int me = context.rank();
  if (transfer.dst->owner != me && transfer.src->owner != me)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "neither end is on this rank (dst rank {}, src rank {})",
             transfer.dst->owner, transfer.src->owner);
  TCA_CHECK(check_extent(*transfer.dst, "destination", dst_offset, dst_pitch, width, count));
  TCA_CHECK(check_extent(*transfer.src, "source", src_offset, src_pitch, width, count));
  transfer.dst_offset = dst_offset;
  transfer.dst_pitch = count > 1 ? dst_pitch : width;
  transfer.src_offset = src_offset;
  transfer.src_pitch = count > 1 ? src_pitch : width;
  transfer.width = width;
  transfer.count = count;
  transfer.flags = flags;
  transfer.slot = slot;
  transfer.peer = transfer.dst->owner != me ? transfer.dst->owner : transfer.src->owner;
  unbind(context, desc);
  desc.transfers.push_back(transfer);
  return TCA_SUCCESS;
}

tcaResult desc_bind(Context& context, tcaDesc_st& desc, int channel) {
  TCA_CHECK(check_channel(channel));
  if (desc.transfers.empty()) TCA_FAIL(TCA_ERROR_INVALID_DESC, "descriptor has no transfers");
  // Resolve every transport first, so a failure leaves the descriptor as it was.
  std::vector<Transport*> transports(desc.transfers.size());
  for (size_t i = 0; i < desc.transfers.size(); ++i)
    TCA_CHECK(context.transport_for(desc.path, desc.transfers[i], &transports[i]));

  std::vector<std::unique_ptr<PreparedRun>> runs;
  std::vector<Transport*> run_transports;
  for (size_t begin = 0; begin < desc.transfers.size();) {
    size_t end = begin + 1;
    while (end < desc.transfers.size() && transports[end] == transports[begin]) ++end;
    const std::vector<Transfer> run(desc.transfers.begin() + begin, desc.transfers.begin() + end);
    std::unique_ptr<PreparedRun> prepared;
    TCA_CHECK(transports[begin]->prepare(run, &prepared));
    runs.push_back(std::move(prepared));
    run_transports.push_back(transports[begin]);
    begin = end;
  }
  std::vector<const PeerRegion*> own_regions;
  for (const Transfer& transfer : desc.transfers)
    for (const PeerRegion* end : {transfer.dst, transfer.src})
      if (end->owner == context.rank() &&
          std::find(own_regions.begin(), own_regions.end(), end) == own_regions.end())
        own_regions.push_back(end);

  unbind(context, desc);
  desc.runs = std::move(runs);
  desc.run_transports = std::move(run_transports);
  desc.transfer_transports = std::move(transports);
  desc.own_regions = std::move(own_regions);
  desc.channel = channel;
  if (observe::counting()) observe::bind(context, desc);
  return TCA_SUCCESS;
}

tcaResult desc_start(Context& context, tcaDesc_st& desc) {
  if (desc.channel < 0)
    TCA_FAIL(TCA_ERROR_INVALID_DESC, "descriptor is not bound to a channel: call tcaDescSet");
  TCA_CHECK(check_own_regions_alive(context, desc));
  for (size_t i = 0; i < desc.runs.size(); ++i) {
    // Chain order across transports: a run starts only after the previous one completed.
    if (i > 0) TCA_CHECK(desc.runs[i - 1]->wait());
    TCA_CHECK(desc.runs[i]->start());
    context.track_run(desc.channel, desc.runs[i].get());
  }
  return TCA_SUCCESS;
}

tcaResult run_immediate(Context& context, Transfer transfer) {
  Transport* transport = nullptr;
  TCA_CHECK(context.transport_for(TCA_PATH_AUTO, transfer, &transport));
  return transport->run_now(transfer);
}

namespace {

trace::TransferRecord record_of(Context& context, tcaPath path, const Transfer& transfer) {
  trace::TransferRecord record;
  record.src_rank = transfer.src->owner;
  record.dst_rank = transfer.dst->owner;
  record.width = transfer.width;
  record.count = transfer.count;
  record.src_pitch = transfer.src_pitch;
  record.dst_pitch = transfer.dst_pitch;
  record.src_kind = transfer.src->kind;
  record.dst_kind = transfer.dst->kind;
  Transport* transport = nullptr;
  record.path = context.transport_for(path, transfer, &transport) == TCA_SUCCESS ? transport->name()
                                                                                 : "unknown";
  if (transport == nullptr) clear_last_error();
  record.notify_slot = (transfer.flags & TCA_FLAG_NOTIFY) ? transfer.slot : -1;
  return record;
}

}  // namespace

void trace_kick(Context& context, const tcaDesc_st& chain, uintptr_t token, uint64_t begin,
                uint64_t end) {
  static thread_local std::vector<trace::TransferRecord> records;  // reused: no allocation
  records.clear();
  for (const Transfer& transfer : chain.transfers)
    records.push_back(record_of(context, chain.path, transfer));
  trace::kick(begin, end, token, chain.channel, records);
}

tcaResult run_traced(Context& context, Transfer transfer, const char* what) {
  if (!trace::enabled()) return run_immediate(context, transfer);
  const trace::TransferRecord record = record_of(context, TCA_PATH_AUTO, transfer);
  const uint64_t begin = trace::now_ns();  // the record is made outside the call's time
  TCA_CHECK(run_immediate(context, transfer));
  trace::put_or_get(begin, what, record);
  return TCA_SUCCESS;
}

}  // namespace tca
