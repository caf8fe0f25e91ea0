// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The mpi transport's prepared runs (mpi_run.h).
#include "transport/mpi/mpi_run.h"

namespace tca::mpi {

tcaResult MpiRun::add(const Transfer& transfer) {
  const PeerRegion& dst = *transfer.dst;
  const PeerRegion& src = *transfer.src;
  if (dst.kind != TCA_MEM_CPU || src.kind != TCA_MEM_CPU)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED,
             "transfer between region {} of rank {} and region {} of rank "
             "{}: the mpi transport carries host memory only",
             src.id, src.owner, dst.id, dst.owner);
  const int me = transport_.job().rank();
  const bool dst_local = dst.owner == me;
  const bool src_local = src.owner == me;
  if ((dst_local && dst.mapped == nullptr) || (src_local && src.mapped == nullptr))
    TCA_FAIL(TCA_ERROR_INTERNAL, "a region of this rank has no local mapping");

  if (dst_local && src_local) {
    const bool contiguous =
        transfer.dst_pitch == transfer.width && transfer.src_pitch == transfer.width;
    const uint64_t width = contiguous ? transfer.width * transfer.count : transfer.width;
    steps_.push_back(CopyStep{dst.mapped + transfer.dst_offset, src.mapped + transfer.src_offset,
                              transfer.dst_pitch, transfer.src_pitch, width,
                              contiguous ? 1 : transfer.count});
  } else if (src_local) {
    TCA_CHECK(add_rma(true, dst, transfer.dst_offset, transfer.dst_pitch,
                      src.mapped + transfer.src_offset, transfer.src_pitch, transfer.width,
                      transfer.count));
  } else if (dst_local) {
    TCA_CHECK(add_rma(false, src, transfer.src_offset, transfer.src_pitch,
                      dst.mapped + transfer.dst_offset, transfer.dst_pitch, transfer.width,
                      transfer.count));
  } else {
    TCA_FAIL(TCA_ERROR_INTERNAL, "neither end of the transfer is on rank {}", me);
  }

  if (transfer.flags & TCA_FLAG_NOTIFY)
    steps_.push_back(NotifyStep{dst.owner, transfer.slot, targets_});
  for (int rank : {dst.owner, src.owner})
    if (rank != me && std::find(involved_.begin(), involved_.end(), rank) == involved_.end())
      involved_.push_back(rank);
  return TCA_SUCCESS;
}

tcaResult MpiRun::add_rma(bool is_put, const PeerRegion& remote, uint64_t remote_offset,
                          uint64_t remote_pitch, unsigned char* local, uint64_t local_pitch,
                          uint64_t width, uint64_t count) {
  TCA_CHECK(transport_.check_reachable(remote.owner));
  const bool probed = std::any_of(probes_.begin(), probes_.end(),
                                  [&](const LivenessProbe& p) { return p.region == &remote; });
  if (!probed) {
    probes_.push_back({&remote, transport_.live_cell_disp(remote)});
    probe_values_.push_back(0);
    if (std::find(probe_targets_.begin(), probe_targets_.end(), remote.owner) ==
        probe_targets_.end())
      probe_targets_.push_back(remote.owner);
  }
  if (std::find(targets_.begin(), targets_.end(), remote.owner) == targets_.end())
    targets_.push_back(remote.owner);

  if (width == 0) return TCA_SUCCESS;
  const MPI_Aint remote_base = static_cast<MPI_Aint>(remote.address + remote_offset);
  if (count == 1 || (local_pitch == width && remote_pitch == width)) {
    add_contiguous(is_put, remote, remote_base, local, width * count);
    return TCA_SUCCESS;
  }
  if (width > kMaxBytesPerCall) {  // rows too wide for one call: each row on its own
    for (uint64_t row = 0; row < count; ++row)
      add_contiguous(is_put, remote, remote_base + static_cast<MPI_Aint>(row * remote_pitch),
                     local + row * local_pitch, width);
    return TCA_SUCCESS;
  }
  // Groups of rows, each one strided datatype per side: one MPI call per group.
  const uint64_t rows_per_call = std::min(count, kMaxBytesPerCall / width);
  Layout local_layout, remote_layout;
  uint64_t layout_rows = 0;
  for (uint64_t row = 0; row < count; row += rows_per_call) {
    const uint64_t rows = std::min(rows_per_call, count - row);
    if (rows != layout_rows) {  // the first group, or a shorter last one
      TCA_CHECK(make_layout(rows, width, local_pitch, &local_layout));
      TCA_CHECK(make_layout(rows, width, remote_pitch, &remote_layout));
      layout_rows = rows;
    }
    RmaStep step;
    step.is_put = is_put;
    step.target = remote.owner;
    step.local = local + row * local_pitch;
    step.local_layout = local_layout;
    step.target_disp = remote_base + static_cast<MPI_Aint>(row * remote_pitch);
    step.target_layout = remote_layout;
    step.bytes = rows * width;
    step.remote = &remote;
    steps_.push_back(step);
  }
  return TCA_SUCCESS;
}

void MpiRun::add_contiguous(bool is_put, const PeerRegion& remote, MPI_Aint target_disp,
                            unsigned char* local, uint64_t bytes) {
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t chunk = std::min(bytes - done, kMaxBytesPerCall);
    const Layout layout{MPI_BYTE, static_cast<int>(chunk)};
    steps_.push_back(RmaStep{is_put, remote.owner, local + done, layout,
                             target_disp + static_cast<MPI_Aint>(done), layout, chunk, &remote});
    done += chunk;
  }
}

tcaResult MpiRun::make_layout(uint64_t rows, uint64_t width, uint64_t pitch, Layout* out) {
  if (rows == 1 || pitch == width) {  // contiguous on this side
    *out = Layout{MPI_BYTE, static_cast<int>(rows * width)};
    return TCA_SUCCESS;
  }
  if (mpi_guard().abandoned())
    TCA_FAIL(TCA_ERROR_PEER_FAILED,
             "the mpi path is closed: an MPI call was abandoned when a "
             "rank died during it");
  MPI_Datatype type;
  TCA_MPI_CHECK(MPI_Type_create_hvector(static_cast<int>(rows), static_cast<int>(width),
                                        static_cast<MPI_Aint>(pitch), MPI_BYTE, &type),
                "MPI_Type_create_hvector of {} blocks of {} bytes at pitch {}", rows, width, pitch);
  datatypes_.emplace_back(type);
  TCA_MPI_CHECK(MPI_Type_commit(&type), "MPI_Type_commit of a {}-block vector", rows);
  *out = Layout{type, 1};
  return TCA_SUCCESS;
}

tcaResult MpiRun::check_liveness() {
  const MPI_Win window = transport_.window();
  for (size_t i = 0; i < probes_.size(); ++i) {
    const PeerRegion& region = *probes_[i].region;
    TCA_MPI_CHECK(MPI_Get(&probe_values_[i], 1, MPI_UINT64_T, region.owner, probes_[i].cell_disp, 1,
                          MPI_UINT64_T, window),
                  "MPI_Get of the liveness of region {} of rank {}", region.id, region.owner);
  }
  for (int target : probe_targets_)
    TCA_MPI_CHECK(MPI_Win_flush(target, window), "MPI_Win_flush to rank {}", target);
  for (size_t i = 0; i < probes_.size(); ++i) {
    const PeerRegion& region = *probes_[i].region;
    if (probe_values_[i] != region.id)
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", region.id, region.owner);
  }
  return TCA_SUCCESS;
}

tcaResult MpiRun::run_rma(const RmaStep& step) {
  const MPI_Win window = transport_.window();
  if (step.is_put) {
    TCA_MPI_CHECK(
        MPI_Put(step.local, step.local_layout.count, step.local_layout.type, step.target,
                step.target_disp, step.target_layout.count, step.target_layout.type, window),
        "MPI_Put of {} bytes into region {} of rank {}", step.bytes, step.remote->id, step.target);
  } else {
    TCA_MPI_CHECK(
        MPI_Get(step.local, step.local_layout.count, step.local_layout.type, step.target,
                step.target_disp, step.target_layout.count, step.target_layout.type, window),
        "MPI_Get of {} bytes from region {} of rank {}", step.bytes, step.remote->id, step.target);
  }
  return TCA_SUCCESS;
}

tcaResult MpiRun::run_notify(const NotifyStep& step) {
  for (int target : step.earlier_targets)
    TCA_MPI_CHECK(MPI_Win_flush(target, transport_.window()),
                  "MPI_Win_flush to rank {} before notifying", target);
  const uint64_t value = transport_.job().next_notify_value(step.peer, step.slot);
  return transport_.raise_slot(step.peer, step.slot, value);
}

tcaResult MpiRun::start() {
  // A dead peer of this host is noticed before any RMA to it (MPI may block on it forever).
  for (int target : probe_targets_) TCA_CHECK(transport_.job().check_peer_alive(target));
  if (involved_.empty()) return run_announced();  // copies inside this rank: no MPI call
  return guarded(&involved_, "a transfer", [&] { return run_announced(); });
}

tcaResult MpiRun::run_announced() {
  TCA_CHECK(announce(false));
  const tcaResult result = run_steps();
  const tcaResult ended = announce(true);
  if (result != TCA_SUCCESS) return append_frame(result, __FILE__, __LINE__);
  return ended == TCA_SUCCESS ? TCA_SUCCESS : append_frame(ended, __FILE__, __LINE__);
}

// Announces the run to the owners of the remote regions it touches (begun), or its end (done,
// after every operation of the run is complete at its target). Each completes at its owner
// before this returns, so an owner withdrawing a region either waits for the run or the run
// sees the region withdrawn.
tcaResult MpiRun::announce(bool done) {
  if (probe_targets_.empty()) return TCA_SUCCESS;
  const MPI_Win window = transport_.window();
  if (done)
    for (int target : targets_)
      TCA_MPI_CHECK(MPI_Win_flush(target, window), "MPI_Win_flush to rank {}", target);
  for (int target : probe_targets_) TCA_CHECK(transport_.announce(target, done));
  for (int target : probe_targets_)
    TCA_MPI_CHECK(MPI_Win_flush(target, window), "MPI_Win_flush to rank {}", target);
  return TCA_SUCCESS;
}

tcaResult MpiRun::run_steps() {
  TCA_CHECK(check_liveness());
  for (const Step& step : steps_) {
    if (const auto* rma = std::get_if<RmaStep>(&step)) {
      TCA_CHECK(run_rma(*rma));
    } else if (const auto* copy = std::get_if<CopyStep>(&step)) {
      // memmove: a region may be copied onto an overlapping part of itself.
      for (uint64_t row = 0; row < copy->count; ++row)
        std::memmove(copy->dst + row * copy->dst_pitch, copy->src + row * copy->src_pitch,
                     copy->width);
    } else {
      TCA_CHECK(run_notify(std::get<NotifyStep>(step)));
    }
  }
  return TCA_SUCCESS;
}

tcaResult MpiRun::wait() {
  if (targets_.empty()) return TCA_SUCCESS;
  return guarded(&targets_, "waiting for a transfer", [&]() -> tcaResult {
    for (int target : targets_)
      TCA_MPI_CHECK(MPI_Win_flush(target, transport_.window()), "MPI_Win_flush to rank {}", target);
    return TCA_SUCCESS;
  });
}

}  // namespace tca::mpi
