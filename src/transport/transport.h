// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A transport is a table of operations (here a C++ interface: its vtable is the table) that
// moves data between this rank and some peers. The registry (transport/registry.h) lists them in
// order of preference; the context asks each whether it can reach a peer for the memory kinds of
// a transfer's two ends, as NCCL asks its transports canConnect and libfabric its providers, and
// takes the first that can. docs/ARCHITECTURE.md shows how a new transport plugs in.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/region.h"
#include "tca/tca.h"

namespace tca {

// One validated transfer of a chain. Bounds, overflow and ownership were checked when it was
// appended; one end is always owned by this rank.
struct Transfer {
  PeerRegion* dst = nullptr;
  uint64_t dst_offset = 0;
  uint64_t dst_pitch = 0;
  PeerRegion* src = nullptr;
  uint64_t src_offset = 0;
  uint64_t src_pitch = 0;
  uint64_t width = 0;  // bytes per block
  uint64_t count = 1;  // blocks (1 for a contiguous transfer)
  unsigned flags = 0;  // TCA_FLAG_*
  int slot = 0;        // notification slot when flags has TCA_FLAG_NOTIFY
  int peer = 0;        // the rank at the other end (this rank for a local copy)
};

// Consecutive transfers of a chain that one transport carries, prepared once at tcaDescSet.
class PreparedRun {
 public:
  virtual ~PreparedRun() = default;
  // Starts every transfer in order; a TCA_FLAG_NOTIFY transfer raises its slot only once it
  // and every earlier transfer of the run are visible at their destinations.
  virtual tcaResult start() = 0;
  // Returns once the last start has completed locally (source reusable, data delivered).
  virtual tcaResult wait() = 0;
};

class Transport {
 public:
  explicit Transport(int id) : id_(id) {}
  virtual ~Transport() = default;
  // The transport's place in the registry: the index of its state in PeerRegion::state, of its
  // records in handles and of its in-flight lane. The paths of one transport share one id.
  int id() const { return id_; }
  virtual const char* name() const = 0;
  virtual tcaPath path() const = 0;
  // Whether this transport carries transfers between this rank's memory of kind `local` and
  // `peer`'s memory of kind `remote` (either end may be the writer).
  virtual bool can_reach(int peer, tcaMemKind local, tcaMemKind remote) const = 0;
  // Whether it can also carry the control traffic to `peer`: region records, liveness,
  // notifications and in-flight announcements in the peer's control block (base/region.h).
  virtual bool controls(int peer) const = 0;
  // Makes this rank's region reachable by peers (e.g. attach it to an RMA window) and appends
  // to `wire` (not yet sealed) what peers need to reach it, if anything (append_handle_record).
  virtual tcaResult register_region(PeerRegion& own, WireHandle* wire) = 0;
  virtual tcaResult deregister_region(PeerRegion& own) = 0;
  // Makes a peer's imported region reachable from here (e.g. map its memfd, unpack its key);
  // called only where can_reach(owner, any kind, region kind).
  virtual tcaResult attach(PeerRegion& remote) = 0;
  // Reads the owner's liveness cell: false once the owner freed or deregistered it.
  virtual tcaResult region_alive(const PeerRegion& region, bool* alive) = 0;
  // Reads the record of `owner`'s region `id` from its control block (base/region.h): *found is
  // false where no live region has that id, *issued the highest id the owner has issued.
  virtual tcaResult read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                                uint64_t* issued) = 0;
  virtual tcaResult prepare(const std::vector<Transfer>& run,
                            std::unique_ptr<PreparedRun>* out) = 0;
  // Runs one transfer to completion now (tcaPut, tcaGet; one end is the caller's unregistered
  // memory): a chain of one, prepared, started and waited for, unless the transport has a
  // cheaper way.
  virtual tcaResult run_now(const Transfer& transfer);
  // Writes `value` into cell (this rank, slot) of `peer`'s control block, after everything
  // this rank sent to `peer` earlier through this transport.
  virtual tcaResult notify(int peer, int slot, uint64_t value) = 0;
  // A pointer for direct stores into `region` at `offset`, or TCA_ERROR_UNSUPPORTED.
  virtual tcaResult pio_pointer(PeerRegion& region, uint64_t offset, void** out) = 0;
  // Orders earlier PIO stores and puts before later notifications.
  virtual tcaResult fence() = 0;
  // Lets the transport advance work it owes others (called while a rank waits).
  virtual tcaResult progress() = 0;

 private:
  int id_;
};

}  // namespace tca
