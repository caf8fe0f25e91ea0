// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Chains on the GPU engines: preparing runs, the engine (chosen by tuning/engine_choice.h), host
// kicks and their announcements to the owners, notifications and PIO pointers.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "tca/tca_cuda.h"
#include "transport/cuda/cuda_transport_impl.h"
#include "transport/job.h"

namespace tca {

Engine CudaTransportImpl::choose_engine(int peer, uint64_t bytes, uint64_t row_bytes) const {
  return engine_choice_.copy_engine(calibration(peer), bytes, row_bytes) ? Engine::kCopyEngine
                                                                         : Engine::kSm;
}

uint64_t CudaTransportImpl::crossover(int peer) const {
  return engine_choice_.crossover(calibration(peer));
}

const PairCalibration* CudaTransportImpl::calibration(int peer) const {
  return peers_[peer].calibration ? &*peers_[peer].calibration : nullptr;
}

tcaResult CudaTransportImpl::prepare_with(std::optional<Engine> engine,
                                          const std::vector<Transfer>& run,
                                          std::unique_ptr<PreparedRun>* out) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  const int me = job_.rank();
  std::vector<DevicePiece> pieces;
  std::vector<LivenessCheck> checks;
  std::vector<HostRegistration> temporary;
  std::vector<NotifyKey> notify_keys;
  uint64_t total_bytes = 0;
  uint64_t narrowest_row = UINT64_MAX;
  for (const Transfer& transfer : run) {
    if (!reaches(transfer.peer))
      TCA_FAIL(TCA_ERROR_UNREACHABLE,
               "rank {} cannot reach rank {} through CUDA (another host, "
               "no GPU on one side, or no peer access)",
               me, transfer.peer);
    DevicePiece piece;
    unsigned char* dst = nullptr;
    unsigned char* src = nullptr;
    TCA_CHECK(end_address(*transfer.dst, &temporary, &dst));
    TCA_CHECK(end_address(*transfer.src, &temporary, &src));
    piece.dst = dst + transfer.dst_offset;
    piece.src = src + transfer.src_offset;
    piece.width = transfer.width;
    piece.count = transfer.count;
    piece.dst_pitch = transfer.dst_pitch;
    piece.src_pitch = transfer.src_pitch;
    if (transfer.flags & TCA_FLAG_NOTIFY) {
      const int receiver = transfer.dst->owner;
      piece.notifies.push_back(
          {reinterpret_cast<uint64_t*>(
               device_address_of_counter(job_.notify_sent_counter(receiver, transfer.slot))),
           reinterpret_cast<uint64_t*>(peers_[receiver].control_device +
                                       notify_cell_offset(me, transfer.slot))});
      notify_keys.push_back({receiver, transfer.slot});
    }
    for (const PeerRegion* end : {transfer.dst, transfer.src}) {
      const bool listed = std::any_of(checks.begin(), checks.end(), [&](const auto& check) {
        return check.id == end->id && check.owner == end->owner;
      });
      if (end->id != 0 && !listed) checks.push_back({live_cell(*end), end->id, end->owner});
    }
    total_bytes += transfer.width * transfer.count;
    if (transfer.count > 1) narrowest_row = std::min(narrowest_row, transfer.width);
    pieces.push_back(std::move(piece));
  }
  Engine chosen = engine ? *engine : choose_engine(run.front().peer, total_bytes, narrowest_row);
  if (!engine && chosen == Engine::kCopyEngine &&
      !std::all_of(pieces.begin(), pieces.end(),
                   [&](const DevicePiece& piece) { return copy_engine_can_carry(piece, limits_); }))
    chosen = Engine::kSm;
  std::unique_ptr<GpuChain> chain;
  TCA_CHECK(make_gpu_chain(chosen, pieces, limits_, &chain));
  TCA_TRACE("prepared a chain of {} transfers, {} bytes, on the {}", run.size(), total_bytes,
            engine_name(chosen));
  *out = std::make_unique<CudaRun>(*this, std::move(chain), std::move(checks), std::move(temporary),
                                   std::move(notify_keys));
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::dma_stream_idle(bool* idle) {
  *idle = true;
  if (!stream_kicks_pending_) return TCA_SUCCESS;
  const cudaError_t state = cudaStreamQuery(dma_stream());  // about a microsecond
  if (state == cudaErrorNotReady) {
    *idle = false;
    return TCA_SUCCESS;
  }
  TCA_CUDA_CHECK(state);
  stream_kicks_pending_ = false;
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::host_kick(GpuChain& chain, const std::vector<uint64_t>* values) {
  const SmCopyParams* phases = chain.resident_phases();
  if (phases != nullptr && values != nullptr &&
      ResidentServer::carries(values->data(), static_cast<uint32_t>(values->size()))) {
    bool idle = false;
    TCA_CHECK(dma_stream_idle(&idle));
    if (idle) {
      if (!resident_) TCA_CHECK(ResidentServer::make(resident_idle_ns_, &resident_));
      return resident_->kick(phases, values->data(), static_cast<uint32_t>(values->size()));
    }
  }
  if (resident_ && resident_->busy()) TCA_CHECK(resident_->wait_all());  // kicks keep their order
  stream_kicks_pending_ = true;
  return values != nullptr ? chain.kick(dma_stream(), values->data()) : chain.enqueue(dma_stream());
}

tcaResult CudaTransportImpl::wait_host_kicks() {
  if (resident_) TCA_CHECK(resident_->wait_all());
  if (stream_kicks_pending_) {
    TCA_CUDA_CHECK(cudaStreamSynchronize(dma_stream()));
    stream_kicks_pending_ = false;
  }
  return publish_completed_kicks(false);
}

void CudaTransportImpl::announce_kick(const std::vector<int>& owners) {
  if (owners.empty()) return;
  if (kick_sequences_.empty()) {
    kick_sequences_.assign(job_.size(), 0);
    kick_unpublished_.assign(job_.size(), false);
  }
  for (int owner : owners) {
    if (peers_[owner].control == nullptr) continue;
    cell_at(peers_[owner].control, inflight_cell_offset(job_.size(), job_.rank(), id(), false))
        ->store(++kick_sequences_[owner], std::memory_order_relaxed);
    kick_unpublished_[owner] = true;
  }
  kicks_unpublished_ = true;
  // Pairs with the owner's fence between withdrawing a record and reading the begun cells.
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

tcaResult CudaTransportImpl::publish_completed_kicks(bool wait) {
  if (!kicks_unpublished_) return TCA_SUCCESS;
  if (wait) return wait_host_kicks();  // which publishes
  if (resident_ && resident_->busy()) return TCA_SUCCESS;
  bool idle = false;
  TCA_CHECK(dma_stream_idle(&idle));
  if (!idle) return TCA_SUCCESS;
  for (int owner = 0; owner < job_.size(); ++owner) {
    if (!kick_unpublished_[owner]) continue;
    cell_at(peers_[owner].control, inflight_cell_offset(job_.size(), job_.rank(), id(), true))
        ->store(kick_sequences_[owner], std::memory_order_release);
    kick_unpublished_[owner] = false;
  }
  kicks_unpublished_ = false;
  return TCA_SUCCESS;
}

void CudaTransportImpl::stop_resident() {
  if (resident_ && resident_->stop() != TCA_SUCCESS) {
    TCA_WARN("ending the resident kernel failed: {}", last_error_message());
    clear_last_error();
  }
}

tcaResult CudaTransportImpl::notify(int peer, int slot, uint64_t value) {
  if (peers_[peer].control == nullptr)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "rank {}'s control block is not mapped here", peer);
  cell_at(peers_[peer].control, notify_cell_offset(job_.rank(), slot))
      ->store(value, std::memory_order_release);
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::pio_pointer(PeerRegion& region, uint64_t offset, void** out) {
  if (region.kind == TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED,
             "region {} of rank {} is GPU memory: the host cannot store "
             "into it; use tcaDevicePointer in a kernel",
             region.id, region.owner);
  if (region.mapped == nullptr)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "region {} of rank {} is not mapped in this process", region.id,
             region.owner);
  *out = region.mapped + offset;
  return TCA_SUCCESS;
}

}  // namespace tca
