// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Prepared runs of the UCX transport: a chain's transfers as puts and gets, announced in the
// owners' in-flight cells, checked against the owners' liveness cells, with notifications that
// follow their data.
#include <algorithm>
#include <variant>

#include "base/error.h"
#include "transport/job.h"
#include "transport/ucx/ucx_transport.h"

namespace tca {
namespace {

// One put or get of contiguous bytes (a row of a 2D transfer, or the whole of a linear one).
struct RmaOp {
  bool is_put = true;
  int peer = 0;  // whose memory the remote end is (this rank for a copy between own regions)
  unsigned char* local = nullptr;
  ucs_memory_type_t local_type = UCS_MEMORY_TYPE_HOST;
  ucp_mem_h local_memh = nullptr;
  uint64_t remote_address = 0;
  ucp_rkey_h rkey = nullptr;
  uint64_t bytes = 0;
};

// Raises `slot` at `peer` once every earlier operation of the run is complete there.
struct NotifyOp {
  int peer = 0;
  int slot = 0;
};

using Op = std::variant<RmaOp, NotifyOp>;

// A peer's region whose liveness cell is read before a start that its owner's open
// announcement does not cover.
struct Probe {
  const PeerRegion* region = nullptr;
  uint64_t value = 0;  // where the get lands
  uint64_t epoch = 0;  // the owner's announcement under which it was last found alive
};

ucs_memory_type_t memory_type(tcaMemKind kind) {
  return kind == TCA_MEM_GPU ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
}

unsigned char* base_of(const PeerRegion& own) {
  return own.mapped != nullptr ? own.mapped : reinterpret_cast<unsigned char*>(own.address);
}

void add_unique(std::vector<int>* list, int value) {
  if (std::find(list->begin(), list->end(), value) == list->end()) list->push_back(value);
}

class UcxRun final : public PreparedRun {
 public:
  explicit UcxRun(UcxTransport& transport) : transport_(transport) {}

  tcaResult add(const Transfer& transfer);
  tcaResult start() override;
  tcaResult wait() override;

 private:
  // The remote end's key: a peer's imported key, or this rank's own key for its own endpoint.
  tcaResult key_of(const PeerRegion& remote, ucp_rkey_h* out) const;
  void add_rows(RmaOp op, uint64_t local_pitch, uint64_t remote_pitch, uint64_t width,
                uint64_t count);
  // The owners whose open announcement does not cover every region of theirs the run touches.
  void find_owners_to_announce();
  tcaResult check_liveness();
  tcaResult announce(bool done);
  tcaResult run_ops();
  tcaResult raise(const NotifyOp& op);
  tcaResult complete_pending(const std::vector<int>& peers);

  UcxTransport& transport_;
  std::vector<Op> ops_;
  std::vector<Probe> probes_;
  std::vector<int> owners_;            // distinct owners of the probed regions
  std::vector<int> renewed_;           // the owners this start announces itself to
  std::vector<int> targets_;           // distinct peers of the operations (this rank for copies)
  std::vector<ucx::Request> pending_;  // operations started and not yet waited for
  std::vector<int> touched_;           // the ranks this start has sent operations to so far
  // Peers of operations on GPU memory. Such data moves through protocols of its own (CUDA IPC
  // copies, pipelines staged through host memory) that a fence does not order against the
  // notification's put into host memory: their notifications wait for a flush.
  std::vector<int> gpu_peers_;
};

tcaResult UcxRun::key_of(const PeerRegion& remote, ucp_rkey_h* out) const {
  const int me = transport_.job().rank();
  if (remote.owner == me) {
    const auto* own = static_cast<const UcxOwnRegion*>(remote.state[transport_.id()]);
    if (own == nullptr)
      TCA_FAIL(TCA_ERROR_UNREACHABLE, "region {} of this rank is not registered with UCX: {}",
               remote.id, transport_.unregistered_reason(remote.id));
    *out = own->self_key.get();
    return TCA_SUCCESS;
  }
  const auto* imported = static_cast<const UcxRemoteRegion*>(remote.state[transport_.id()]);
  if (imported == nullptr)
    TCA_FAIL(TCA_ERROR_UNREACHABLE,
             "region {} of rank {} has no UCX key in its handle (its "
             "owner's UCX could not register it)",
             remote.id, remote.owner);
  *out = imported->key.get();
  return TCA_SUCCESS;
}

// Whether this rank's `region` is registered with UCX (a tcaPut/tcaGet buffer is not).
bool registered(const PeerRegion& region, int id) { return region.state[id] != nullptr; }

tcaResult UcxRun::add(const Transfer& transfer) {
  const int me = transport_.job().rank();
  const PeerRegion& dst = *transfer.dst;
  const PeerRegion& src = *transfer.src;
  // The local end is the source of a push, the destination of a pull; a copy between two ends
  // of this rank is a push to its own endpoint unless only the source is registered.
  const bool pull = src.owner != me || (dst.owner == me && !registered(dst, transport_.id()));
  const PeerRegion& local = pull ? dst : src;
  const PeerRegion& remote = pull ? src : dst;
  if (!transport_.can_reach(transfer.peer, local.kind, remote.kind))
    TCA_FAIL(TCA_ERROR_UNREACHABLE,
             "the ucx transport cannot reach rank {}'s memory from rank "
             "{}: {}",
             transfer.peer, me,
             transport_.unreachable_reason(transfer.peer, local.kind, remote.kind));

  RmaOp op;
  op.is_put = !pull;
  op.peer = remote.owner;
  op.local_type = memory_type(local.kind);
  const auto* own = static_cast<const UcxOwnRegion*>(local.state[transport_.id()]);
  op.local_memh = own != nullptr ? own->memory.get() : nullptr;  // unregistered: UCX looks
  TCA_CHECK(key_of(remote, &op.rkey));
  const uint64_t local_offset = pull ? transfer.dst_offset : transfer.src_offset;
  const uint64_t remote_offset = pull ? transfer.src_offset : transfer.dst_offset;
  op.local = base_of(local) + local_offset;
  op.remote_address = remote.address + remote_offset;
  if (remote.owner != me) {
    const bool probed = std::any_of(probes_.begin(), probes_.end(),
                                    [&](const Probe& probe) { return probe.region == &remote; });
    if (!probed) probes_.push_back({&remote, 0});
    add_unique(&owners_, remote.owner);
  }
  add_unique(&targets_, remote.owner);
  if (local.kind == TCA_MEM_GPU || remote.kind == TCA_MEM_GPU)
    add_unique(&gpu_peers_, remote.owner);
  add_rows(op, pull ? transfer.dst_pitch : transfer.src_pitch,
           pull ? transfer.src_pitch : transfer.dst_pitch, transfer.width, transfer.count);
  if (transfer.flags & TCA_FLAG_NOTIFY) ops_.push_back(NotifyOp{dst.owner, transfer.slot});
  return TCA_SUCCESS;
}

// A linear transfer (or rows that touch on both sides) is one operation; other 2D transfers
// are one operation per row.
void UcxRun::add_rows(RmaOp op, uint64_t local_pitch, uint64_t remote_pitch, uint64_t width,
                      uint64_t count) {
  if (width == 0) return;
  if (count == 1 || (local_pitch == width && remote_pitch == width)) {
    op.bytes = width * count;
    ops_.push_back(op);
    return;
  }
  op.bytes = width;
  for (uint64_t row = 0; row < count; ++row) {
    RmaOp row_op = op;
    row_op.local = op.local + row * local_pitch;
    row_op.remote_address = op.remote_address + row * remote_pitch;
    ops_.push_back(row_op);
  }
}

// ---------------------------------------------------------------- start

tcaResult UcxRun::start() {
  const ucx::WorkerUse use = transport_.use();
  Job& job = transport_.job();
  // A dead peer of this machine is noticed before anything is sent to it.
  for (int owner : owners_) TCA_CHECK(job.check_peer_alive(owner));
  find_owners_to_announce();
  TCA_CHECK(announce(false));
  const tcaResult result = run_ops();
  const tcaResult ended = announce(true);
  if (result != TCA_SUCCESS) {
    // A run that wrote nothing: its owners need not wait the idle delay for its done count.
    if (result == TCA_ERROR_FREED_HANDLE) (void)transport_.send_due_done(true);
    return append_frame(result, __FILE__, __LINE__);
  }
  return ended == TCA_SUCCESS ? TCA_SUCCESS : append_frame(ended, __FILE__, __LINE__);
}

void UcxRun::find_owners_to_announce() {
  renewed_.clear();
  for (int owner : owners_) {
    const uint64_t epoch = transport_.open_epoch(owner);
    const bool covered =
        epoch != 0 && std::all_of(probes_.begin(), probes_.end(), [&](const Probe& probe) {
          return probe.region->owner != owner || probe.epoch == epoch;
        });
    if (!covered) renewed_.push_back(owner);
  }
}

// Begun (to the owners not covered): the count lands at each owner before the liveness gets are
// served there (a fence between them), so an owner that withdraws a region either sees the run
// begun and waits for it, or the run reads the region withdrawn and writes nothing. Done (to
// every owner): after a fence, so that whenever it goes it lands after every operation of the run.
tcaResult UcxRun::announce(bool done) {
  if (done) {
    if (owners_.empty()) return TCA_SUCCESS;
    TCA_CHECK(transport_.fence());
    for (int owner : owners_) TCA_CHECK(transport_.announce(owner, true));
    return TCA_SUCCESS;
  }
  if (renewed_.empty()) return TCA_SUCCESS;
  for (int owner : renewed_) TCA_CHECK(transport_.announce(owner, false));
  return transport_.fence();
}

tcaResult UcxRun::check_liveness() {
  std::vector<Probe*> checked;
  for (Probe& probe : probes_)
    if (std::find(renewed_.begin(), renewed_.end(), probe.region->owner) != renewed_.end())
      checked.push_back(&probe);
  if (checked.empty()) return TCA_SUCCESS;
  std::vector<ucx::Request> gets(checked.size());
  for (size_t i = 0; i < checked.size(); ++i) {
    const PeerRegion& region = *checked[i]->region;
    TCA_CHECK(ucx::get(transport_.endpoint(region.owner), &checked[i]->value,
                       sizeof checked[i]->value, UCS_MEMORY_TYPE_HOST,
                       transport_.control_address(region.owner, live_cell_offset(region.id)),
                       transport_.control_key(region.owner), &gets[i]));
  }
  TCA_CHECK(ucx::wait_all(transport_.worker(), gets, transport_.check_for(renewed_)));
  for (Probe* probe : checked) {
    if (probe->value != probe->region->id)
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", probe->region->id,
               probe->region->owner);
    probe->epoch = transport_.open_epoch(probe->region->owner);
  }
  return TCA_SUCCESS;
}

tcaResult UcxRun::run_ops() {
  TCA_CHECK(check_liveness());
  touched_.clear();
  for (const Op& op : ops_) {
    if (const auto* rma = std::get_if<RmaOp>(&op)) {
      ucx::Request request;
      const ucp_ep_h ep = transport_.endpoint(rma->peer);
      if (rma->is_put) {
        TCA_CHECK(ucx::put(ep, rma->local, rma->bytes, rma->local_type, rma->remote_address,
                           rma->rkey, &request, rma->local_memh));
      } else {
        TCA_CHECK(ucx::get(ep, rma->local, rma->bytes, rma->local_type, rma->remote_address,
                           rma->rkey, &request, rma->local_memh));
      }
      if (request.test() == UCS_INPROGRESS) pending_.push_back(std::move(request));
      add_unique(&touched_, rma->peer);
    } else {
      TCA_CHECK(raise(std::get<NotifyOp>(op)));
    }
  }
  return TCA_SUCCESS;
}

tcaResult UcxRun::raise(const NotifyOp& op) {
  const int me = transport_.job().rank();
  const uint64_t value = transport_.job().next_notify_value(op.peer, op.slot);
  if (op.peer != me) {
    // Earlier operations to other ranks complete first; those to `peer` are ordered before the
    // notification by the fence in notify(), except GPU memory's (gpu_peers_): flushed first.
    std::vector<int> others;
    for (int target : touched_)
      if (target != op.peer ||
          std::find(gpu_peers_.begin(), gpu_peers_.end(), target) != gpu_peers_.end())
        others.push_back(target);
    if (!others.empty()) TCA_CHECK(complete_pending(others));
    return transport_.notify(op.peer, op.slot, value);
  }
  // This rank's own cell: every earlier operation must be complete here first (gets landed,
  // copies flushed through this rank's own endpoint).
  TCA_CHECK(complete_pending({me}));
  return transport_.notify(me, op.slot, value);
}

// Local completion of every pending operation, then completion at each of `peers`.
tcaResult UcxRun::complete_pending(const std::vector<int>& peers) {
  TCA_CHECK(ucx::wait_all(transport_.worker(), pending_, transport_.check_for(targets_)));
  for (int peer : peers) {
    ucx::Request flushed;
    TCA_CHECK(ucx::flush(transport_.endpoint(peer), &flushed));
    TCA_CHECK(ucx::wait(transport_.worker(), flushed, transport_.check_for({peer})));
  }
  return TCA_SUCCESS;
}

// The data is delivered (source reusable, destination written) once every operation is
// complete at its target: a flush of each target's endpoint.
tcaResult UcxRun::wait() {
  const ucx::WorkerUse use = transport_.use();
  return complete_pending(targets_);
}

}  // namespace

tcaResult UcxTransport::prepare(const std::vector<Transfer>& run,
                                std::unique_ptr<PreparedRun>* out) {
  auto prepared = std::make_unique<UcxRun>(*this);
  for (const Transfer& transfer : run) TCA_CHECK(prepared->add(transfer));
  *out = std::move(prepared);
  return TCA_SUCCESS;
}

}  // namespace tca
