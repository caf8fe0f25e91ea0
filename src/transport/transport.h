// A transport is a table of operations (here a C++ interface: its vtable is the table) that
// moves data between this rank and some peers. The context picks one per peer pair, as NCCL
// picks among its transports and libfabric among its providers. docs/ARCHITECTURE.md shows how
// a new transport plugs in.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/region.h"
#include "tca/tca.h"

namespace tca {

class Context;

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
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual tcaPath path() const = 0;
  virtual bool can_reach(int peer) const = 0;
  // Makes this rank's region reachable by peers (e.g. attach it to an RMA window).
  virtual tcaResult register_region(PeerRegion& own) = 0;
  virtual tcaResult deregister_region(PeerRegion& own) = 0;
  // Makes a peer's imported region reachable from here (e.g. map its memfd).
  virtual tcaResult attach(PeerRegion& remote) = 0;
  // Reads the owner's liveness cell: false once the owner freed or deregistered it.
  virtual tcaResult region_alive(const PeerRegion& region, bool* alive) = 0;
  // Reads the record of `owner`'s region `id` from its control block (core/region.h): *found is
  // false where no live region has that id, *issued the highest id the owner has issued.
  virtual tcaResult read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                                uint64_t* issued) = 0;
  virtual tcaResult prepare(const std::vector<Transfer>& run,
                            std::unique_ptr<PreparedRun>* out) = 0;
  // Writes `value` into cell (this rank, slot) of `peer`'s control block, after everything
  // this rank sent to `peer` earlier through this transport.
  virtual tcaResult notify(int peer, int slot, uint64_t value) = 0;
  // A pointer for direct stores into `region` at `offset`, or TCA_ERROR_UNSUPPORTED.
  virtual tcaResult pio_pointer(PeerRegion& region, uint64_t offset, void** out) = 0;
  // Orders earlier PIO stores and puts before later notifications.
  virtual tcaResult fence() = 0;
  // Lets the transport advance work it owes others (called while a rank waits).
  virtual tcaResult progress() = 0;
};

// Factories; each is collective over all ranks (called by every rank in tcaInit).
tcaResult make_shm_transport(Context& context, std::unique_ptr<Transport>* out);
tcaResult make_mpi_transport(Context& context, std::unique_ptr<Transport>* out);

}  // namespace tca
