// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The public C API: argument checks, then the context does the work.
#include <cstring>
#include <memory>

#include "base/error.h"
#include "base/trace.h"
#include "base/trace_format.h"
#include "core/context.h"
#include "core/desc.h"
#include "core/observe/api_observe.h"
#include "core/observe/count.h"
#include "core/observe/observe.h"
#include "core/reserved.h"

namespace tca {
namespace {
std::unique_ptr<Context> g_context;
}  // namespace

Context* current_context() { return g_context.get(); }

namespace {

tcaResult get_context(Context** out) {
  if (g_context == nullptr) TCA_FAIL(TCA_ERROR_NOT_INITIALIZED, "call tcaInit first");
  *out = g_context.get();
  return TCA_SUCCESS;
}

tcaResult get_desc(Context* context, tcaDesc desc, tcaDesc_st** out) {
  return context->descriptors().find(desc, out);
}

tcaResult check_rank(const Context& context, int rank, bool any_allowed) {
  if (any_allowed && rank == TCA_ANY_RANK) return TCA_SUCCESS;
  if (rank < 0 || rank >= context.size())
    TCA_FAIL(TCA_ERROR_INVALID_RANK, "rank {} outside [0, {})", rank, context.size());
  return TCA_SUCCESS;
}

// FREED_HANDLE once the region's owner withdrew it.
tcaResult check_alive(Context& context, const PeerRegion& region) {
  bool alive = false;
  TCA_CHECK(context.region_alive(region, &alive));
  if (!alive)
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", region.id, region.owner);
  return TCA_SUCCESS;
}

// A transfer end in the caller's own, unregistered memory (tcaPut's source, tcaGet's target).
PeerRegion unregistered_local(const Context& context, void* ptr, size_t bytes) {
  PeerRegion region;
  region.owner = context.rank();
  region.owner_pid = context.peer(context.rank()).pid;
  region.bytes = bytes;
  region.address = reinterpret_cast<uintptr_t>(ptr);
  region.kind = context.local_memory_kind(ptr);
  region.mapped = region.kind == TCA_MEM_CPU ? static_cast<unsigned char*>(ptr) : nullptr;
  return region;
}

}  // namespace
}  // namespace tca

using tca::Context;

#define TCA_CONTEXT(name)  \
  Context* name = nullptr; \
  TCA_CHECK(tca::get_context(&name))

extern "C" {

tcaResult tcaInit(void) { return tcaInitWithConfig(nullptr); }

tcaResult tcaGetVersion(int* major, int* minor, int* patch) {
  if (major != nullptr) *major = TCA_VERSION_MAJOR;
  if (minor != nullptr) *minor = TCA_VERSION_MINOR;
  if (patch != nullptr) *patch = TCA_VERSION_PATCH;
  return TCA_SUCCESS;
}

tcaResult tcaInitWithConfig(const tcaConfig* config) {
  if (tca::g_context != nullptr) TCA_FAIL(TCA_ERROR_ALREADY_INITIALIZED, "tcaInit called twice");
  TCA_CHECK(Context::create(config, &tca::g_context));
  const Context& context = *tca::g_context;
  tcaResult traced =
      tca::trace::open(context.rank(), context.size(), context.peer(context.rank()).host_hash);
  if (traced == TCA_SUCCESS) traced = tca::observe::open(*tca::g_context);
  if (traced != TCA_SUCCESS) {
    tca::trace::close();
    tca::ErrorKeeper keep;
    tca::g_context.reset();
    return traced;
  }
  return TCA_SUCCESS;
}

tcaResult tcaFinalize(void) {
  TCA_CONTEXT(context);
  for (int channel = 0; channel < TCA_DMA_CHANNELS; ++channel)
    TCA_CHECK(context->wait_channel(channel));
  const tcaResult observed = tca::observe::close(*context);
  tca::trace::close();
  tca::g_context.reset();
  return observed;
}

tcaResult tcaRank(int* rank) {
  TCA_CONTEXT(context);
  if (rank == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "rank is NULL");
  *rank = context->rank();
  return TCA_SUCCESS;
}

tcaResult tcaSize(int* size) {
  TCA_CONTEXT(context);
  if (size == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "size is NULL");
  *size = context->size();
  return TCA_SUCCESS;
}

tcaResult tcaBarrier(void) {
  TCA_CONTEXT(context);
  if (!tca::trace::enabled()) return context->bootstrap().barrier();
  const uint64_t begin = tca::trace::now_ns();
  TCA_CHECK(context->bootstrap().barrier());
  tca::trace::barrier(begin);
  return TCA_SUCCESS;
}

tcaResult tcaBootstrapAllgather(const void* mine, void* all, size_t bytes) {
  TCA_CONTEXT(context);
  if (mine == nullptr || all == nullptr || bytes == 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "tcaBootstrapAllgather needs buffers and bytes > 0");
  return context->bootstrap().allgather(mine, all, bytes);
}

tcaResult tcaBootstrapBroadcast(void* data, size_t bytes, int root) {
  TCA_CONTEXT(context);
  if (data == nullptr || bytes == 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "tcaBootstrapBroadcast needs a buffer and bytes > 0");
  TCA_CHECK(tca::check_rank(*context, root, false));
  return context->bootstrap().broadcast(data, bytes, root);
}

tcaResult tcaBootstrapInfo(const char** name, const char** reason) {
  TCA_CONTEXT(context);
  if (name != nullptr) *name = context->bootstrap().name();
  if (reason != nullptr) *reason = context->bootstrap().reason().c_str();
  return TCA_SUCCESS;
}

tcaResult tcaSetTimeout(int timeout_ms) {
  TCA_CONTEXT(context);
  if (timeout_ms <= 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "timeout {} ms is not positive", timeout_ms);
  context->set_timeout_ms(timeout_ms);
  return TCA_SUCCESS;
}

tcaResult tcaGetTimeout(int* timeout_ms) {
  TCA_CONTEXT(context);
  if (timeout_ms == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "timeout_ms is NULL");
  *timeout_ms = context->timeout_ms();
  return TCA_SUCCESS;
}

tcaResult tcaPeerTransport(int peer, const char** name) {
  TCA_CONTEXT(context);
  TCA_CHECK(tca::check_rank(*context, peer, false));
  if (name == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "name is NULL");
  *name = context->default_transport(peer)->name();
  return TCA_SUCCESS;
}

tcaResult tcaPathAvailable(tcaPath path, int peer, int* available) {
  TCA_CONTEXT(context);
  TCA_CHECK(tca::check_rank(*context, peer, false));
  if (available == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "available is NULL");
  tca::Transport* transport = nullptr;
  *available = context->transport_for(path, peer, &transport) == TCA_SUCCESS;
  tca::clear_last_error();  // "not available" is an answer, not a failure
  return TCA_SUCCESS;
}

tcaResult tcaMalloc(void** ptr, size_t bytes, tcaMemKind kind) {
  TCA_CONTEXT(context);
  return context->malloc_memory(ptr, bytes, kind);
}

tcaResult tcaFree(void* ptr) {
  TCA_CONTEXT(context);
  return context->free_memory(ptr);
}

tcaResult tcaCreateHandle(tcaHandle* handle, void* ptr, size_t bytes, tcaMemKind kind) {
  TCA_CONTEXT(context);
  return context->create_handle(ptr, bytes, kind, handle);
}

tcaResult tcaDestroyHandle(const tcaHandle* handle) {
  TCA_CONTEXT(context);
  return context->destroy_handle(handle);
}

tcaResult tcaAllgatherHandles(const tcaHandle* mine, tcaHandle* all) {
  TCA_CONTEXT(context);
  if (mine == nullptr || all == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "mine or all is NULL");
  return context->bootstrap().allgather(mine, all, sizeof(tcaHandle));
}

tcaResult tcaHandleInfo(const tcaHandle* handle, int* owner, size_t* bytes, tcaMemKind* kind) {
  TCA_CONTEXT(context);
  tca::PeerRegion* region = nullptr;
  TCA_CHECK(context->resolve(handle, &region));
  if (owner != nullptr) *owner = region->owner;
  if (bytes != nullptr) *bytes = region->bytes;
  if (kind != nullptr) *kind = region->kind;
  return TCA_SUCCESS;
}

tcaResult tcaDescNew(tcaDesc* desc) {
  TCA_CONTEXT(context);
  return context->descriptors().create(desc);
}

tcaResult tcaDescFree(tcaDesc desc) {
  TCA_CONTEXT(context);
  return context->descriptors().destroy(*context, desc);
}

tcaResult tcaDescSetMemcpy(tcaDesc desc, const tcaHandle* dst, size_t dst_offset,
                           const tcaHandle* src, size_t src_offset, size_t bytes, unsigned flags,
                           int notify_slot) {
  TCA_CONTEXT(context);
  tcaDesc_st* chain = nullptr;
  TCA_CHECK(tca::get_desc(context, desc, &chain));
  return tca::desc_append(*context, *chain, dst, dst_offset, bytes, src, src_offset, bytes, bytes,
                          1, flags, notify_slot);
}

tcaResult tcaDescSetMemcpy2D(tcaDesc desc, const tcaHandle* dst, size_t dst_offset,
                             size_t dst_pitch, const tcaHandle* src, size_t src_offset,
                             size_t src_pitch, size_t width, size_t count, unsigned flags,
                             int notify_slot) {
  TCA_CONTEXT(context);
  tcaDesc_st* chain = nullptr;
  TCA_CHECK(tca::get_desc(context, desc, &chain));
  // An empty block-stride entry would still be walked block by block on some paths.
  if (width == 0 || count == 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "block-stride transfer of {} blocks of {} bytes: width "
             "and count must be positive",
             count, width);
  return tca::desc_append(*context, *chain, dst, dst_offset, dst_pitch, src, src_offset, src_pitch,
                          width, count, flags, notify_slot);
}

tcaResult tcaDescSetPath(tcaDesc desc, tcaPath path) {
  TCA_CONTEXT(context);
  tcaDesc_st* chain = nullptr;
  TCA_CHECK(tca::get_desc(context, desc, &chain));
  if (path < TCA_PATH_AUTO || path > TCA_PATH_UCX)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown path {}", static_cast<int>(path));
  if (chain->path != path && chain->channel >= 0)
    TCA_FAIL(TCA_ERROR_INVALID_DESC, "descriptor is bound; set its path before tcaDescSet");
  chain->path = path;
  return TCA_SUCCESS;
}

tcaResult tcaDescSet(tcaDesc desc, int channel) {
  TCA_CONTEXT(context);
  tcaDesc_st* chain = nullptr;
  TCA_CHECK(tca::get_desc(context, desc, &chain));
  return tca::desc_bind(*context, *chain, channel);
}

tcaResult tcaStartDMADesc(tcaDesc desc) {
  TCA_CONTEXT(context);
  tcaDesc_st* chain = nullptr;
  TCA_CHECK(tca::get_desc(context, desc, &chain));
  if (tca::observe::on()) {
    const uintptr_t token = reinterpret_cast<uintptr_t>(desc);
    if (tca::observe::counting_only()) return tca::observe::counted_start(*context, *chain, token);
    return tca::observe::start_desc(*context, *chain, token);
  }
  if (!tca::trace::enabled()) return tca::desc_start(*context, *chain);
  const uint64_t begin = tca::trace::now_ns();
  TCA_CHECK(tca::desc_start(*context, *chain));
  tca::trace_kick(*context, *chain, reinterpret_cast<uintptr_t>(desc), begin, tca::trace::now_ns());
  return TCA_SUCCESS;
}

tcaResult tcaWaitDMAC(int channel) {
  TCA_CONTEXT(context);
  TCA_CHECK(tca::check_channel(channel));
  if (tca::observe::on()) {
    if (tca::observe::counting_only()) return tca::observe::counted_drain(*context, channel);
    return tca::observe::wait_dmac(*context, channel);
  }
  if (!tca::trace::enabled()) return context->wait_channel(channel);
  const uint64_t begin = tca::trace::now_ns();
  TCA_CHECK(context->wait_channel(channel));
  tca::trace::drain(begin, channel);
  return TCA_SUCCESS;
}

tcaResult tcaWaitDMARecvDesc(int src_rank, int slot, int* from) {
  TCA_CONTEXT(context);
  TCA_CHECK(tca::check_rank(*context, src_rank, true));
  TCA_CHECK(tca::check_slot(slot));
  if (tca::observe::on()) {
    if (tca::observe::counting_only())
      return tca::observe::counted_wait(*context, src_rank, slot, from);
    return tca::observe::wait_recv(*context, src_rank, slot, from);
  }
  if (!tca::trace::enabled()) return context->wait_notification(src_rank, slot, from);
  const uint64_t begin = tca::trace::now_ns();
  int sender = src_rank;
  TCA_CHECK(context->wait_notification(src_rank, slot, &sender));
  if (from != nullptr) *from = sender;
  tca::trace::wait(begin, src_rank, slot, sender);
  return TCA_SUCCESS;
}

tcaResult tcaTestDMARecvDesc(int src_rank, int slot, int* arrived, int* from) {
  TCA_CONTEXT(context);
  TCA_CHECK(tca::check_rank(*context, src_rank, true));
  TCA_CHECK(tca::check_slot(slot));
  if (arrived == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "arrived is NULL");
  if (tca::observe::on()) return tca::observe::test_recv(*context, src_rank, slot, arrived, from);
  if (!tca::trace::enabled()) return context->test_notification(src_rank, slot, arrived, from);
  int sender = src_rank;
  TCA_CHECK(context->test_notification(src_rank, slot, arrived, &sender));
  if (from != nullptr) *from = sender;
  // A polled wait: it began at the first miss (a hit at once is a wait of no length).
  if (*arrived)
    tca::trace::wait(tca::trace::now_ns(), src_rank, slot, sender);
  else
    tca::trace::test_missed(src_rank, slot);
  return TCA_SUCCESS;
}

tcaResult tcaPut(const tcaHandle* dst, size_t dst_offset, const void* src, size_t bytes) {
  TCA_CONTEXT(context);
  if (src == nullptr && bytes > 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "src is NULL");
  tca::Transfer transfer;
  TCA_CHECK(context->resolve(dst, &transfer.dst, false));  // the run reads the liveness
  TCA_CHECK(tca::check_extent(*transfer.dst, "destination", dst_offset, bytes, bytes, 1));
  if (bytes == 0) return tca::check_alive(*context, *transfer.dst);  // nothing to move
  tca::PeerRegion source = tca::unregistered_local(*context, const_cast<void*>(src), bytes);
  transfer.src = &source;
  transfer.dst_offset = dst_offset;
  transfer.dst_pitch = transfer.src_pitch = transfer.width = bytes;
  transfer.peer = transfer.dst->owner;
  if (tca::observe::on()) return tca::observe::put_or_get(*context, transfer, true);
  return tca::run_traced(*context, transfer, tca::trace_format::kPut);
}

tcaResult tcaGet(void* dst, const tcaHandle* src, size_t src_offset, size_t bytes) {
  TCA_CONTEXT(context);
  if (dst == nullptr && bytes > 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "dst is NULL");
  tca::Transfer transfer;
  TCA_CHECK(context->resolve(src, &transfer.src, false));  // the run reads the liveness
  TCA_CHECK(tca::check_extent(*transfer.src, "source", src_offset, bytes, bytes, 1));
  if (bytes == 0) return tca::check_alive(*context, *transfer.src);  // nothing to move
  tca::PeerRegion target = tca::unregistered_local(*context, dst, bytes);
  transfer.dst = &target;
  transfer.src_offset = src_offset;
  transfer.dst_pitch = transfer.src_pitch = transfer.width = bytes;
  transfer.peer = transfer.src->owner;
  if (tca::observe::on()) return tca::observe::put_or_get(*context, transfer, false);
  return tca::run_traced(*context, transfer, tca::trace_format::kGet);
}

tcaResult tcaPIOPointer(void** ptr, const tcaHandle* handle, size_t offset, size_t bytes) {
  TCA_CONTEXT(context);
  if (ptr == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "ptr is NULL");
  tca::PeerRegion* region = nullptr;
  TCA_CHECK(context->resolve(handle, &region));
  TCA_CHECK(tca::check_extent(*region, "PIO window", offset, bytes, bytes, 1));
  // The caller's own host memory needs no transport, whichever reaches the peers.
  if (region->owner == context->rank() && region->mapped != nullptr) {
    *ptr = region->mapped + offset;
    if (tca::trace::enabled()) tca::trace::pio(region->owner, offset, bytes, region->kind, "local");
    return TCA_SUCCESS;
  }
  tca::Transport* transport = context->default_transport(region->owner);
  TCA_CHECK(transport->pio_pointer(*region, offset, ptr));
  if (tca::trace::enabled())
    tca::trace::pio(region->owner, offset, bytes, region->kind, transport->name());
  return TCA_SUCCESS;
}

tcaResult tcaPIOFence(void) {
  TCA_CONTEXT(context);
  if (!tca::trace::enabled()) return context->fence();
  const uint64_t begin = tca::trace::now_ns();
  TCA_CHECK(context->fence());
  tca::trace::fence(begin);
  return TCA_SUCCESS;
}

tcaResult tcaNotify(int dst_rank, int slot) {
  TCA_CONTEXT(context);
  TCA_CHECK(tca::check_rank(*context, dst_rank, false));
  TCA_CHECK(tca::check_slot(slot));
  if (tca::observe::on()) {
    if (tca::observe::counting_only())
      return tca::observe::counted_notify(*context, dst_rank, slot);
    return tca::observe::notify_peer(*context, dst_rank, slot);
  }
  if (!tca::trace::enabled()) return context->notify(dst_rank, slot);
  const uint64_t begin = tca::trace::now_ns();
  TCA_CHECK(context->notify(dst_rank, slot));
  tca::trace::notify(begin, dst_rank, slot, context->default_transport(dst_rank)->name());
  return TCA_SUCCESS;
}

}  // extern "C"
