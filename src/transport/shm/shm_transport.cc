// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// CPU shared-memory transport for ranks of one host. Regions from tcaMalloc are memfds that
// peers map, so a transfer is a memcpy in chain order and a notification is a release store
// into the receiver's control block. Memory the user registered (not a memfd) is reached with
// cross-memory attach (process_vm_writev/readv), one system call per piece.
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <vector>

#include "base/error.h"
#include "base/host_memory.h"
#include "base/wake.h"
#include "transport/job.h"
#include "transport/transport.h"

namespace tca {
namespace {

std::atomic<uint64_t>* cell_at(unsigned char* block, uint64_t offset) {
  return reinterpret_cast<std::atomic<uint64_t>*>(block + offset);
}

// One transfer resolved to addresses. Exactly one of these holds: both ends are mapped here
// (memcpy), or the remote end is user memory of process `remote_pid` (cross-memory attach).
struct ShmOp {
  unsigned char* dst = nullptr;  // local address, or the remote address for a CMA write
  const unsigned char* src = nullptr;
  uint64_t width = 0;
  uint64_t count = 1;
  uint64_t dst_pitch = 0;
  uint64_t src_pitch = 0;
  int remote_pid = 0;  // nonzero: cross-memory attach with this process
  bool remote_is_dst = false;
  std::atomic<uint64_t>* notify_cell = nullptr;  // raised after this op when non-null
  unsigned char* notify_control = nullptr;       // the receiver's control block
  int notify_peer = 0;
  int notify_slot = 0;
};

struct LivenessCheck {
  const std::atomic<uint64_t>* cell;
  uint64_t id;
  int owner;
};

// This rank's in-flight cells (base/region.h) in the control block of one owner it reaches.
struct Announcement {
  std::atomic<uint64_t>* begun;
  std::atomic<uint64_t>* done;
  uint64_t* sequence;  // this rank's count of transfers announced to that owner (the transport's)
};

// Marks the announced transfers ended when it goes out of scope, however the run ends.
class AnnouncedRun {
 public:
  explicit AnnouncedRun(const std::vector<Announcement>& announcements)
      : announcements_(announcements) {
    for (const Announcement& a : announcements_)
      a.begun->store(++*a.sequence, std::memory_order_relaxed);
    // Pairs with the owner's fence between withdrawing a record and reading the begun cells:
    // either the owner waits for this run, or this run sees the record withdrawn.
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  ~AnnouncedRun() {
    for (const Announcement& a : announcements_)
      a.done->store(*a.sequence, std::memory_order_release);
  }
  AnnouncedRun(const AnnouncedRun&) = delete;
  AnnouncedRun& operator=(const AnnouncedRun&) = delete;

 private:
  const std::vector<Announcement>& announcements_;
};

// Moves the blocks of `op` between this process and `op.remote_pid`, IOV_MAX blocks per system
// call. The kernel stops short only at a fault, so a short count is an error, not a retry.
tcaResult cross_memory_copy(const ShmOp& op) {
  constexpr uint64_t kBlocksPerCall = IOV_MAX;
  std::vector<iovec> local;
  std::vector<iovec> remote;
  for (uint64_t first = 0; first < op.count; first += kBlocksPerCall) {
    const uint64_t blocks = std::min(kBlocksPerCall, op.count - first);
    local.clear();
    remote.clear();
    for (uint64_t i = first; i < first + blocks; ++i) {
      iovec to{op.dst + i * op.dst_pitch, op.width};
      iovec from{const_cast<unsigned char*>(op.src) + i * op.src_pitch, op.width};
      local.push_back(op.remote_is_dst ? from : to);
      remote.push_back(op.remote_is_dst ? to : from);
    }
    const ssize_t moved =
        op.remote_is_dst
            ? process_vm_writev(op.remote_pid, local.data(), blocks, remote.data(), blocks, 0)
            : process_vm_readv(op.remote_pid, local.data(), blocks, remote.data(), blocks, 0);
    if (moved < 0 && errno == ESRCH)
      TCA_FAIL(TCA_ERROR_PEER_FAILED, "process {} is gone", op.remote_pid);
    if (moved != static_cast<ssize_t>(blocks * op.width))
      TCA_FAIL(TCA_ERROR_TRANSPORT, "cross-memory {} with process {} moved {} of {} bytes: {}",
               op.remote_is_dst ? "write" : "read", op.remote_pid, moved, blocks * op.width,
               moved < 0 ? std::strerror(errno) : "short transfer");
  }
  return TCA_SUCCESS;
}

// Runs `ops` in order once the owners are told and every region is alive.
tcaResult run_ops(Job& job, const std::vector<ShmOp>& ops, const std::vector<LivenessCheck>& checks,
                  const std::vector<Announcement>& announcements) {
  const AnnouncedRun announced(announcements);
  for (const LivenessCheck& check : checks)
    if (check.cell->load(std::memory_order_acquire) != check.id)
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} was freed; nothing was written",
               check.id, check.owner);
  for (const ShmOp& op : ops) {
    if (op.remote_pid != 0) {
      TCA_CHECK(cross_memory_copy(op));
    } else if (op.count == 1) {
      std::memcpy(op.dst, op.src, op.width);
    } else {
      for (uint64_t i = 0; i < op.count; ++i)
        std::memcpy(op.dst + i * op.dst_pitch, op.src + i * op.src_pitch, op.width);
    }
    // The release store publishes every earlier copy of the run with the notification.
    if (op.notify_cell != nullptr) {
      op.notify_cell->store(job.next_notify_value(op.notify_peer, op.notify_slot),
                            std::memory_order_release);
      wake_sleepers(op.notify_control, job.size());
    }
  }
  return TCA_SUCCESS;
}

class ShmRun final : public PreparedRun {
 public:
  ShmRun(Job& job, std::vector<ShmOp> ops, std::vector<LivenessCheck> checks,
         std::vector<Announcement> announcements)
      : job_(job),
        ops_(std::move(ops)),
        checks_(std::move(checks)),
        announcements_(std::move(announcements)) {}

  tcaResult start() override { return run_ops(job_, ops_, checks_, announcements_); }

  // Copies finish inside start(): the CPU is the copy engine here.
  tcaResult wait() override { return TCA_SUCCESS; }

 private:
  Job& job_;
  std::vector<ShmOp> ops_;
  std::vector<LivenessCheck> checks_;
  std::vector<Announcement> announcements_;
};

class ShmTransport final : public Transport {
 public:
  ShmTransport(Job& job, int id) : Transport(id), job_(job) {}

  tcaResult init() {
    const int size = job_.size();
    control_.assign(size, nullptr);
    control_maps_.resize(size);
    sequences_.assign(size, 0);
    for (int peer = 0; peer < size; ++peer) {
      if (!job_.same_host(peer)) continue;
      if (peer == job_.rank()) {
        control_[peer] = job_.control_block();
        continue;
      }
      const PeerInfo& info = job_.peer(peer);
      TCA_CHECK(PeerMapping::open(info.pid, info.control_fd, 0, job_.control_block_size(),
                                  job_.memfd_name(peer, 0).c_str(), info.control_inode,
                                  &control_maps_[peer]));
      control_[peer] = control_maps_[peer].data();
    }
    return TCA_SUCCESS;
  }

  const char* name() const override { return "shm"; }
  tcaPath path() const override { return TCA_PATH_SHM; }
  // Host memory of ranks on this host (whose control blocks are mapped here).
  bool can_reach(int peer, tcaMemKind local, tcaMemKind remote) const override {
    return control_[peer] != nullptr && local == TCA_MEM_CPU && remote == TCA_MEM_CPU;
  }
  bool controls(int peer) const override { return control_[peer] != nullptr; }

  // Peers map tcaMalloc memfds or use cross-memory attach: nothing to publish.
  tcaResult register_region(PeerRegion&, WireHandle*) override { return TCA_SUCCESS; }
  tcaResult deregister_region(PeerRegion&) override { return TCA_SUCCESS; }

  tcaResult attach(PeerRegion& remote) override {
    if (!remote.wire.mappable || remote.kind != TCA_MEM_CPU) return TCA_SUCCESS;
    PeerMapping mapping;
    TCA_CHECK(PeerMapping::open(remote.owner_pid, remote.wire.memfd, remote.wire.memfd_offset,
                                remote.bytes,
                                job_.memfd_name(remote.owner, remote.wire.memfd_serial).c_str(),
                                remote.memfd_inode, &mapping));
    remote.mapped = mapping.data();
    region_maps_.push_back(std::move(mapping));
    return TCA_SUCCESS;
  }

  tcaResult region_alive(const PeerRegion& region, bool* alive) override {
    *alive = live_cell(region)->load(std::memory_order_acquire) == region.id;
    return TCA_SUCCESS;
  }

  tcaResult read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                        uint64_t* issued) override {
    *issued =
        cell_at(control_[owner], issued_id_offset(job_.size()))->load(std::memory_order_acquire);
    *found = tca::read_record(control_[owner], id, out);
    return TCA_SUCCESS;
  }

  tcaResult prepare(const std::vector<Transfer>& run, std::unique_ptr<PreparedRun>* out) override {
    Scratch parts;
    for (const Transfer& transfer : run) TCA_CHECK(add_transfer(transfer, &parts));
    *out = std::make_unique<ShmRun>(job_, std::move(parts.ops), std::move(parts.checks),
                                    std::move(parts.announcements));
    return TCA_SUCCESS;
  }

  // A put or get runs in the call: no run is made, and the vectors are the transport's own.
  tcaResult run_now(const Transfer& transfer) override {
    now_.ops.clear();
    now_.checks.clear();
    now_.announcements.clear();
    now_.announced_owners.clear();
    TCA_CHECK(add_transfer(transfer, &now_));
    return run_ops(job_, now_.ops, now_.checks, now_.announcements);
  }

  tcaResult notify(int peer, int slot, uint64_t value) override {
    cell_at(control_[peer], notify_cell_offset(job_.rank(), slot))
        ->store(value, std::memory_order_release);
    wake_sleepers(control_[peer], job_.size());
    return TCA_SUCCESS;
  }

  tcaResult pio_pointer(PeerRegion& region, uint64_t offset, void** out) override {
    if (region.mapped == nullptr)
      TCA_FAIL(TCA_ERROR_UNSUPPORTED,
               "region {} of rank {} is user memory that this process "
               "cannot map; register tcaMalloc memory for PIO, or use tcaPut",
               region.id, region.owner);
    *out = region.mapped + offset;
    return TCA_SUCCESS;
  }

  tcaResult fence() override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return TCA_SUCCESS;
  }

  tcaResult progress() override { return TCA_SUCCESS; }

 private:
  // What a run of transfers needs: their ops, the liveness checks of registered ends, the
  // owners to tell before the copies (base/region.h).
  struct Scratch {
    std::vector<ShmOp> ops;
    std::vector<LivenessCheck> checks;
    std::vector<Announcement> announcements;
    std::vector<int> announced_owners;
  };
  tcaResult add_transfer(const Transfer& transfer, Scratch* parts) {
    const int me = job_.rank();
    if (transfer.dst->kind != TCA_MEM_CPU || transfer.src->kind != TCA_MEM_CPU)
      TCA_FAIL(TCA_ERROR_UNSUPPORTED, "shm transport carries host memory only");
    for (const PeerRegion* end : {transfer.dst, transfer.src}) {
      const bool registered = end->id != 0;  // tcaPut/tcaGet's own buffer is not
      const bool listed = std::any_of(
          parts->checks.begin(), parts->checks.end(),
          [&](const auto& check) { return check.id == end->id && check.owner == end->owner; });
      if (registered && !listed) parts->checks.push_back({live_cell(*end), end->id, end->owner});
    }
    const PeerRegion* remote = transfer.dst->owner != me ? transfer.dst : transfer.src;
    if (remote->owner != me &&
        std::find(parts->announced_owners.begin(), parts->announced_owners.end(), remote->owner) ==
            parts->announced_owners.end()) {
      parts->announced_owners.push_back(remote->owner);
      parts->announcements.push_back(announcement_to(remote->owner));
    }
    ShmOp op;
    op.width = transfer.width;
    op.count = transfer.count;
    op.dst_pitch = transfer.dst_pitch;
    op.src_pitch = transfer.src_pitch;
    if (remote->owner != me && remote->mapped == nullptr) {
      op.remote_pid = remote->owner_pid;
      op.remote_is_dst = remote == transfer.dst;
      op.dst = op.remote_is_dst ? reinterpret_cast<unsigned char*>(remote->address)
                                : transfer.dst->mapped;
      op.src = op.remote_is_dst ? transfer.src->mapped
                                : reinterpret_cast<const unsigned char*>(remote->address);
    } else {
      op.dst = transfer.dst->mapped;
      op.src = transfer.src->mapped;
    }
    op.dst += transfer.dst_offset;
    op.src += transfer.src_offset;
    if (transfer.flags & TCA_FLAG_NOTIFY) {
      const int receiver = transfer.dst->owner;
      op.notify_cell = cell_at(control_[receiver], notify_cell_offset(me, transfer.slot));
      op.notify_control = control_[receiver];
      op.notify_peer = receiver;
      op.notify_slot = transfer.slot;
    }
    parts->ops.push_back(op);
    return TCA_SUCCESS;
  }

  const std::atomic<uint64_t>* live_cell(const PeerRegion& region) const {
    return cell_at(control_[region.owner], live_cell_offset(region.id));
  }
  Announcement announcement_to(int owner) {
    const int world = job_.size();
    const int me = job_.rank();
    return {cell_at(control_[owner], inflight_cell_offset(world, me, id(), false)),
            cell_at(control_[owner], inflight_cell_offset(world, me, id(), true)),
            &sequences_[owner]};
  }

  Job& job_;
  std::vector<unsigned char*> control_;  // each same-host rank's control block, else null
  std::vector<PeerMapping> control_maps_;
  std::vector<PeerMapping> region_maps_;  // imports, unmapped with the transport
  std::vector<uint64_t> sequences_;       // transfers announced to each owner
  Scratch now_;                           // run_now's, kept for their capacity
};

}  // namespace

tcaResult make_shm_transport(Job& job, int id, std::vector<std::unique_ptr<Transport>>* out) {
  auto transport = std::make_unique<ShmTransport>(job, id);
  TCA_CHECK(transport->init());
  out->push_back(std::move(transport));
  return TCA_SUCCESS;
}

}  // namespace tca
