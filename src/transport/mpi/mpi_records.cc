// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The mpi transport's reads of owners' control blocks: liveness cells, region records, and the
// in-flight announcements that make an owner's deregistration wait for transfers under way.
#include "transport/mpi/mpi_transport.h"

namespace tca::mpi {

tcaResult MpiTransport::region_alive(const PeerRegion& region, bool* alive) {
  if (region.owner == job_.rank()) {
    *alive = load_acquire(job_.control_block(), live_cell_offset(region.id)) == region.id;
    return TCA_SUCCESS;
  }
  TCA_CHECK(check_reachable(region.owner));
  return guarded(region.owner, "a liveness read", [&]() -> tcaResult {
    uint64_t value = 0;
    TCA_MPI_CHECK(MPI_Get(&value, 1, MPI_UINT64_T, region.owner, live_cell_disp(region), 1,
                          MPI_UINT64_T, window_),
                  "MPI_Get of the liveness of region {} of rank {}", region.id, region.owner);
    TCA_MPI_CHECK(MPI_Win_flush(region.owner, window_), "MPI_Win_flush to rank {}", region.owner);
    *alive = value == region.id;
    return TCA_SUCCESS;
  });
}

tcaResult MpiTransport::get_words(int owner, MPI_Aint disp, uint64_t* words, int count) {
  TCA_MPI_CHECK(MPI_Get(words, count, MPI_UINT64_T, owner, control_blocks_[owner] + disp, count,
                        MPI_UINT64_T, window_),
                "MPI_Get of {} words of the control block of rank {}", count, owner);
  TCA_MPI_CHECK(MPI_Win_flush(owner, window_), "MPI_Win_flush to rank {}", owner);
  return TCA_SUCCESS;
}

tcaResult MpiTransport::read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                                    uint64_t* issued) {
  if (owner == job_.rank()) {
    *issued = load_acquire(job_.control_block(), issued_id_offset(job_.size()));
    *found = tca::read_record(job_.control_block(), id, out);
    return TCA_SUCCESS;
  }
  TCA_CHECK(check_reachable(owner));
  TCA_CHECK(job_.check_peer_alive(owner));
  return guarded(owner, "a region record read",
                 [&] { return read_remote_record(owner, id, out, found, issued); });
}

tcaResult MpiTransport::read_remote_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                                           uint64_t* issued) {
  // The id before and after the words, each read completed before the next is issued: the
  // owner writes the words only while the id is absent, so equal ids bracket a whole record.
  const auto record_disp = static_cast<MPI_Aint>(record_offset(id));
  uint64_t before = 0, after = 0;
  uint64_t words[kRecordWords] = {};
  TCA_CHECK(get_words(owner, static_cast<MPI_Aint>(issued_id_offset(job_.size())), issued, 1));
  TCA_CHECK(get_words(owner, record_disp, &before, 1));
  *found = before == id;
  if (!*found) return TCA_SUCCESS;
  TCA_CHECK(get_words(owner, record_disp, words, static_cast<int>(kRecordWords)));
  TCA_CHECK(get_words(owner, record_disp, &after, 1));
  *found = after == id && words[0] == id;
  if (*found) *out = decode_record(words);
  return TCA_SUCCESS;
}

tcaResult MpiTransport::announce(int owner, bool done) {
  uint64_t& sequence = sequences_[owner];
  if (!done) ++sequence;
  const auto cell = control_blocks_[owner] + static_cast<MPI_Aint>(inflight_cell_offset(
                                                 job_.size(), job_.rank(), id(), done));
  // Accumulate, like notifications: the owner reads the cell while it may change.
  TCA_MPI_CHECK(MPI_Accumulate(&sequence, 1, MPI_UINT64_T, owner, cell, 1, MPI_UINT64_T,
                               MPI_REPLACE, window_),
                "MPI_Accumulate of the in-flight cell at rank {}", owner);
  return TCA_SUCCESS;
}

}  // namespace tca::mpi
