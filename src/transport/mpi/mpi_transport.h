// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The MPI one-sided transport: every rank exposes its control block and its registered host
// regions through one dynamic RMA window, held in a lock_all epoch for the transport's lifetime.
// Puts and gets go straight to the owner's base address (the target displacement of a dynamic
// window); notifications are MPI_Accumulate(REPLACE) into the receiver's control block after a
// flush, so they are never visible before the data they announce.
//
// Where no window can be made (one rank alone, or no MPI component serves dynamic windows) the
// transport still carries this rank's transfers to itself, and reports other ranks unreachable.
//
// mpi_transport.cc: start-up, notifications, fences; mpi_window.cc: the window's attached
// memory; mpi_records.cc: reading owners' control blocks; mpi_run.cc: prepared runs.
#pragma once

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/error.h"
#include "base/host_memory.h"
#include "base/log.h"
#include "base/wake.h"
#include "bootstrap/bootstrap.h"
#include "transport/job.h"
#include "transport/transport.h"

namespace tca::mpi {

// The largest amount one MPI call moves: counts are ints, and keeping every datatype's size
// below 2 GiB also keeps MPI_Type_size and the osc components' int arithmetic exact.
constexpr uint64_t kMaxBytesPerCall = uint64_t{1} << 30;

// Runs `call`, an MPI call that involves `ranks` (every rank where null), through the process's
// MPI guard (bootstrap/call_guard.h) where it is started, else right here at no cost.
template <typename Call>
tcaResult guarded(const std::vector<int>* ranks, const char* what, Call&& call) {
  if (!mpi_guard().engaged()) return call();
  return mpi_guard().run(ranks, what, std::forward<Call>(call));
}

template <typename Call>
tcaResult guarded(int peer, const char* what, Call&& call) {
  if (!mpi_guard().engaged()) return call();
  const std::vector<int> ranks{peer};
  return mpi_guard().run(&ranks, what, std::forward<Call>(call));
}

// The text of MPI error `code` (with a hint for an unattached target).
std::string mpi_error_text(int code);

}  // namespace tca::mpi

// Fails with TCA_ERROR_TRANSPORT naming the MPI call (formatted from the trailing arguments).
#define TCA_MPI_CHECK(call, ...)                                                 \
  do {                                                                           \
    const int tca_mpi_code_ = (call);                                            \
    if (tca_mpi_code_ != MPI_SUCCESS)                                            \
      TCA_FAIL(TCA_ERROR_TRANSPORT, "{} failed: {}", ::fmt::format(__VA_ARGS__), \
               ::tca::mpi::mpi_error_text(tca_mpi_code_));                       \
  } while (0)

namespace tca::mpi {

inline uint64_t load_acquire(const unsigned char* block, uint64_t offset) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(block + offset), __ATOMIC_ACQUIRE);
}
// [begin, end) of whole pages in this process's address space.
struct PageRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};
class MpiTransport final : public Transport {
 public:
  MpiTransport(Job& job, int id) : Transport(id), job_(job) {}
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;
  ~MpiTransport() override;

  tcaResult init();

  const char* name() const override { return "mpi"; }
  tcaPath path() const override { return TCA_PATH_MPI; }
  // Host memory of every rank (through the window; this rank's own without one).
  bool can_reach(int peer, tcaMemKind local, tcaMemKind remote) const override {
    return controls(peer) && local == TCA_MEM_CPU && remote == TCA_MEM_CPU;
  }
  bool controls(int peer) const override {
    return peer == job_.rank() || (window_ != MPI_WIN_NULL && peer >= 0 && peer < job_.size());
  }
  tcaResult register_region(PeerRegion& own, WireHandle* wire) override;
  tcaResult deregister_region(PeerRegion& own) override;
  tcaResult attach(PeerRegion&) override { return TCA_SUCCESS; }
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
  MPI_Win window() const { return window_; }
  MPI_Aint live_cell_disp(const PeerRegion& region) const {
    return control_blocks_[region.owner] + static_cast<MPI_Aint>(live_cell_offset(region.id));
  }
  // Fails with TCA_ERROR_UNREACHABLE when `peer` is another rank and there is no window.
  tcaResult check_reachable(int peer) const;
  // Writes the next begun (or, with `done`, the current) count of this rank's transfers into
  // `owner`'s in-flight cell (base/region.h); completed by the caller's next flush to `owner`.
  tcaResult announce(int owner, bool done);
  // Reads `words` words at `disp` of `owner`'s control block and waits for them.
  tcaResult get_words(int owner, MPI_Aint disp, uint64_t* words, int count);
  tcaResult read_remote_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                               uint64_t* issued);
  // Writes `value` into cell (this rank, slot) of `peer`'s control block and completes it there.
  tcaResult raise_slot(int peer, int slot, uint64_t value);

 private:
  PageRange pages_of(const PeerRegion& own) const;
  tcaResult attach_span(PageRange range);
  // `range` grown to reach the attached span nearest to it.
  PageRange hull_with_nearest_span(PageRange range) const;
  // Detaches `replaced` and attaches `merged` in their place (restoring them on failure).
  tcaResult replace_spans(const std::vector<PageRange>& replaced, PageRange merged);
  tcaResult detach_span(uintptr_t begin);
  void release_window();
  // Whether AUTO sends any peer's traffic here (then registrations must be reachable at once).
  bool carries_default_traffic() const;

  Job& job_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  bool locked_ = false;
  bool control_block_attached_ = false;
  size_t max_spans_ = SIZE_MAX;           // besides the control block
  bool warned_unreachable_ = false;       // about a region left out of the window
  std::string no_window_reason_;          // why the window could not be made, if it could not
  std::vector<MPI_Aint> control_blocks_;  // every rank's control-block address
  std::vector<uint64_t> sequences_;       // transfers announced to each owner
  // Same-host peers' control blocks, mapped only to wake a peer sleeping in a wait
  // (base/wake.h) after a notification lands.
  std::vector<PeerMapping> wake_maps_;
  uintptr_t page_size_ = 4096;
  // Memory attached to the window, as disjoint whole-page spans (begin -> end). MPI forbids
  // overlapping attachments, while registrations may overlap or share pages; the spans are the
  // page-wise union of the registrations in `attached_regions_` (or, at the span limit, hulls).
  std::map<uintptr_t, uintptr_t> spans_;
  std::map<uint64_t, PageRange> attached_regions_;  // region id -> its pages
};
}  // namespace tca::mpi
