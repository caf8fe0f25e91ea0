// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The UCX transport: one-sided puts and gets through UCX (ucp), between any two ranks, for host
// and GPU memory in every direction. It is the transport that reaches GPU memory on other hosts:
// UCX carries it over GPUDirect RDMA where the site's UCX has InfiniBand/RoCE, over cuda_ipc or
// shared memory inside a host, and over TCP with staging through host memory elsewhere.
//
// - Regions: ucp_mem_map at registration; the packed remote key is this transport's record in
//   the region's handle, unpacked by a peer when it imports the handle (attach).
// - Control block: mapped at init, its address and key exchanged through the bootstrap; records,
//   liveness, notification cells and in-flight cells of a peer are read with gets and written
//   with puts (8-byte words; no atomics: they are not offered on GPU memory by every UCX
//   transport, and each cell has one writer).
// - Runs: announced in the owners' in-flight cells (a put, then a fence, before the liveness gets
//   that decide whether the run may write; the done count follows the run's operations after a
//   fence, with the next announcement or on its own), then puts and gets (a 2D transfer as one
//   operation per row), and a notification as a fence followed by a put of the count into the
//   receiver's cell, so it never overtakes its data (a flush instead of the fence where the run
//   wrote GPU memory, or other ranks' memory, before it). An announcement whose done count has not
//   gone keeps the owner from finishing any withdrawal, so for a short while it covers later runs
//   to that owner whose regions were found alive under it (announce()).
// - Waits progress the worker (over TCP the data lands only inside the target's progress), end
//   with TCA_ERROR_TIMEOUT after the context's timeout and with TCA_ERROR_PEER_FAILED when the
//   peer's process is gone or UCX reports its endpoint failed. Between the rank's tca calls a
//   helper thread progresses the worker (progress.h), so peers reach this rank's memory while
//   it computes or waits in MPI.
// - No PIO: pio_pointer answers TCA_ERROR_UNSUPPORTED.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"
#include "transport/ucx/endpoints.h"
#include "transport/ucx/memory.h"
#include "transport/ucx/progress.h"
#include "transport/ucx/request.h"
#include "transport/ucx/worker.h"

namespace tca {

class Job;

// An own region as UCX knows it: its registration, and its key unpacked for this rank's own
// endpoint (copies between two regions of this rank are puts to itself).
struct UcxOwnRegion {
  ucx::MemoryRegion memory;
  ucx::RemoteKey self_key;
};

// A peer's region as this rank reaches it.
struct UcxRemoteRegion {
  ucx::RemoteKey key;
};

class UcxTransport final : public Transport {
 public:
  UcxTransport(Job& job, int id);
  UcxTransport(const UcxTransport&) = delete;
  UcxTransport& operator=(const UcxTransport&) = delete;
  ~UcxTransport() override;

  // Collective. A UCX that cannot start here leaves the transport reaching no rank.
  tcaResult init();

  const char* name() const override { return "ucx"; }
  tcaPath path() const override { return TCA_PATH_UCX; }
  bool can_reach(int peer, tcaMemKind local, tcaMemKind remote) const override;
  bool controls(int peer) const override;
  tcaResult register_region(PeerRegion& own, WireHandle* wire) override;
  tcaResult deregister_region(PeerRegion& own) override;
  tcaResult attach(PeerRegion& remote) override;
  tcaResult region_alive(const PeerRegion& region, bool* alive) override;
  tcaResult read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                        uint64_t* issued) override;
  tcaResult prepare(const std::vector<Transfer>& run, std::unique_ptr<PreparedRun>* out) override;
  tcaResult notify(int peer, int slot, uint64_t value) override;
  tcaResult pio_pointer(PeerRegion& region, uint64_t offset, void** out) override;
  tcaResult fence() override;
  tcaResult progress() override;

  // ---- what prepared runs use ----
  Job& job() { return job_; }
  // Holds the worker for this thread (the helper thread stays out) for the caller's scope.
  ucx::WorkerUse use() { return ucx::WorkerUse(progress_); }
  const ucx::Worker& worker() const { return worker_; }
  ucp_ep_h endpoint(int rank) const { return endpoints_[rank]; }
  // The address of `offset` in `owner`'s control block, and the key to reach it.
  uint64_t control_address(int owner, uint64_t offset) const {
    return control_blocks_[owner] + offset;
  }
  ucp_rkey_h control_key(int owner) const { return control_keys_[owner].get(); }
  // A wait's check: fails once the context's timeout passed since `start` or once one of
  // `peers` is gone (its process, or its endpoint).
  ucx::WaitCheck check_for(std::vector<int> peers) const;
  // Puts `value` into the word at `offset` of `owner`'s control block, without waiting: it lands
  // after everything issued to `owner` before the last fence (its source is kept until UCX is
  // done with it).
  tcaResult put_word(int owner, uint64_t offset, uint64_t value);
  // Reads `count` words at `offset` of `owner`'s control block (complete on return).
  tcaResult get_words(int owner, uint64_t offset, uint64_t* words, size_t count);
  // Announces runs into `owner`'s memory in this rank's in-flight cells there. begun puts the
  // next begun count together with the done count of the runs before it (the two cells are
  // adjacent: one put) and opens a new epoch; done only records a run's end. The done count goes
  // with the next begun or, once it has waited kDoneDelay, on its own (progress(), the helper
  // thread). While it has not gone, the owner cannot finish withdrawing any region (it waits for
  // this rank's done), so for up to kLease after a begun, later runs to `owner` whose regions
  // were found alive in that epoch need no announcement and no liveness read of their own.
  tcaResult announce(int owner, bool done);
  // The epoch of this rank's open announcement at `owner` while it may cover another run, else 0.
  uint64_t open_epoch(int owner) const;
  // Puts the done counts that waited long enough, or all of them (caller holds the worker).
  tcaResult send_due_done(bool all);
  // Why `peer`'s memory of kind `remote` is out of reach from this rank's of kind `local`.
  std::string unreachable_reason(int peer, tcaMemKind local, tcaMemKind remote) const;
  // Why this rank's region `id` has no UCX registration ("" where it has one or is unknown).
  std::string unregistered_reason(uint64_t id) const;

 private:
  tcaResult start_ucx(std::vector<uint8_t>* cuda_capable);
  // put_word without marking the worker as used by the owner's thread (the caller holds it).
  tcaResult post_words(int owner, uint64_t offset, const uint64_t* values, size_t count);

  tcaResult map_control_block();
  // Registers `own` with UCX and appends its key to `wire` (caller holds the worker).
  tcaResult map_region(PeerRegion& own, WireHandle* wire);
  tcaResult reach(int rank);
  tcaResult teardown();

  Job& job_;
  bool ready_ = false;         // UCX runs on every rank and knows every rank's address
  std::string unusable_;       // why not, where it does not
  std::vector<uint8_t> cuda_;  // per rank: its UCX registers CUDA memory
  ucx::UcpContext ucp_;
  ucx::Worker worker_;
  ucx::Endpoints endpoints_;
  ucx::MemoryRegion control_memory_;
  std::vector<uint64_t> control_blocks_;      // every rank's control-block address
  std::vector<ucx::RemoteKey> control_keys_;  // ... and its key, for the endpoint to it (once made)
  std::vector<std::vector<uint8_t>> control_packed_;  // ... the key as its owner packed it
  struct Announced {                                  // this rank's runs into one owner's memory
    uint64_t begun = 0;
    uint64_t epoch = 0;      // of the last begun
    uint64_t begun_ns = 0;   // when it was put
    uint64_t done_due = 0;   // runs ended
    uint64_t done_sent = 0;  // the done count last put
    uint64_t due_since_ns = 0;
  };
  std::vector<Announced> announced_;                       // per owner
  std::map<uint64_t, std::unique_ptr<UcxOwnRegion>> own_;  // by region id
  // This rank's regions UCX could not register (by id): why, for the error of a run through
  // ucx that needs one; and how many so far (the first is a warning, the rest info lines).
  std::map<uint64_t, std::string> unregistered_;
  uint64_t registration_failures_ = 0;
  std::vector<std::unique_ptr<UcxRemoteRegion>> imported_;
  // Words put and not yet complete, oldest first (a deque: their addresses never move).
  struct PostedWord {
    uint64_t values[2] = {};
    ucx::Request request;
  };
  std::deque<PostedWord> posted_;
  ucx::ProgressThread progress_;  // stopped before anything above goes
};

// The registry's factory (collective).
tcaResult make_ucx_transport(Job& job, int id, std::vector<std::unique_ptr<Transport>>* out);

}  // namespace tca
