// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The CUDA transport: GPU regions shared between the processes of a host through CUDA IPC,
// chains carried by the copy engines or the SMs, notifications raised by the GPU into the
// receiver's control block (host memory, mapped for the GPU), and the device API's pointers and
// signal cells. The GPU API (cuda_api.cc) and the core see it through this class.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/cuda_util.h"
#include "base/host_memory.h"
#include "domain/cuda_domain.h"
#include "transport/cuda/copy_paths.h"
#include "transport/cuda/pair_calibration.h"
#include "transport/cuda/resident.h"
#include "transport/job.h"
#include "transport/transport.h"

namespace tca {

class CudaTransportImpl;

// The notification slot of the calibration's ping-pongs: each arrives and is consumed before
// tcaInit returns, so the slot's sequences start every later use in step.
constexpr int kCalibrationSlot = TCA_NOTIFY_SLOTS - 1;

inline std::atomic<uint64_t>* cell_at(unsigned char* block, uint64_t offset) {
  return reinterpret_cast<std::atomic<uint64_t>*>(block + offset);
}

// A region's liveness cell in its owner's control block, read before every kick.
struct LivenessCheck {
  const std::atomic<uint64_t>* cell;
  uint64_t id;
  int owner;
};

// A notification of a chain, as the host counts it: (receiver, slot).
struct NotifyKey {
  int receiver;
  int slot;
};

// A chain run prepared for one GPU engine.
class CudaRun final : public PreparedRun {
 public:
  CudaRun(CudaTransportImpl& transport, std::unique_ptr<GpuChain> chain,
          std::vector<LivenessCheck> checks, std::vector<HostRegistration> pinned,
          std::vector<NotifyKey> notifies);
  ~CudaRun() override;
  // Host kick (CudaTransportImpl::host_kick); wait() waits for every host kick so far, this
  // one included.
  tcaResult start() override;
  tcaResult wait() override;
  // Stream-ordered kick (tcaStartDMADescStream).
  tcaResult enqueue(cudaStream_t stream);

 private:
  tcaResult check_alive() const;
  // Liveness, stream-wait timeouts and the current device, before any launch.
  tcaResult ready_to_launch() const;

  CudaTransportImpl& transport_;
  std::unique_ptr<GpuChain> chain_;
  std::vector<LivenessCheck> checks_;
  std::vector<HostRegistration> pinned_;  // tcaPut/tcaGet buffers pinned for this run
  std::vector<NotifyKey> notifies_;       // in chain order
  std::vector<uint64_t> values_;          // the values of the last host kick
  std::vector<int> owners_;               // other ranks whose memory the chain touches
  bool kicked_ = false;
};

class CudaTransportImpl final : public Transport {
 public:
  CudaTransportImpl(Job& job, int id) : Transport(id), job_(job) {}
  tcaResult init();  // collective

  // ---- the transport table ----
  const char* name() const override { return "cuda"; }
  tcaPath path() const override { return TCA_PATH_CUDA; }
  // Ranks of this host whose GPU this process can map, for transfers with a GPU end (and, when
  // a program names the path, between host memories pinned for the GPU).
  bool can_reach(int peer, tcaMemKind, tcaMemKind) const override { return reaches(peer); }
  bool controls(int peer) const override { return reaches(peer); }
  bool reaches(int peer) const { return peers_[peer].reachable; }
  tcaResult register_region(PeerRegion& own, WireHandle* wire) override;
  tcaResult deregister_region(PeerRegion& own) override;
  tcaResult attach(PeerRegion& remote) override;
  tcaResult region_alive(const PeerRegion& region, bool* alive) override;
  tcaResult read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                        uint64_t* issued) override;
  tcaResult prepare(const std::vector<Transfer>& run, std::unique_ptr<PreparedRun>* out) override {
    return prepare_with(std::nullopt, run, out);
  }
  // A contiguous transfer without a notification: one copy on the DMA stream (cuda_immediate.cc).
  tcaResult run_now(const Transfer& transfer) override;
  tcaResult notify(int peer, int slot, uint64_t value) override;
  tcaResult pio_pointer(PeerRegion& region, uint64_t offset, void** out) override;
  tcaResult fence() override { return TCA_SUCCESS; }  // the host stores into no GPU memory
  tcaResult progress() override { return publish_completed_kicks(false); }

  // ---- the engines, the GPU API and the path views ----
  // Prepares `run` for `engine`, or for the engine the calibration picks when none is given.
  tcaResult prepare_with(std::optional<Engine> engine, const std::vector<Transfer>& run,
                         std::unique_ptr<PreparedRun>* out);
  tcaResult require_device() const;
  int device() const { return device_; }
  Job& job() const { return job_; }
  // Makes this rank's device current on the calling thread (tca may be called from any).
  tcaResult use_device() const;
  cudaStream_t dma_stream() const { return dma_stream_.get(); }
  // A host kick of `chain` (with `values`, one per notification, where it is host-counted):
  // through the resident kernel where the chain is for it and no earlier kick is pending on the
  // DMA stream, else on the DMA stream (which follows the legacy default stream; the resident
  // kernel does not: querying that stream would cost a microsecond a kick).
  tcaResult host_kick(GpuChain& chain, const std::vector<uint64_t>* values);
  // Every host kick so far is complete.
  tcaResult wait_host_kicks();
  // Announces a host kick into `owners`' memory in their control blocks (base/region.h: begun),
  // before the kick checks their regions' liveness.
  void announce_kick(const std::vector<int>& owners);
  // Marks every announced host kick done at its owners once all host kicks are complete (with
  // `wait`, after waiting for them; without, only if they already are).
  tcaResult publish_completed_kicks(bool wait);
  // Ends the resident kernel, if one runs: before CUDA calls that wait for every kernel
  // (cudaFree and the like), which would otherwise wait for it to go idle.
  void stop_resident();
  // The engine TCA_PATH_CUDA takes to `peer` for `bytes` in all, rows at least `row_bytes` wide.
  Engine choose_engine(int peer, uint64_t bytes, uint64_t row_bytes) const;
  // The size from which every larger transfer to `peer` takes the copy engines.
  uint64_t crossover(int peer) const;
  // The measurement behind choose_engine(peer, ...); null where none was made.
  const PairCalibration* calibration(int peer) const;
  // The device address of `region` (mapping or pinning it first if needed).
  tcaResult device_address(PeerRegion& region, unsigned char** out);
  tcaResult signal_address(int rank, int index, uint64_t** out) const;
  tcaResult enqueue_notification_wait(int src_rank, int slot, cudaStream_t stream);
  // Fails once with TCA_ERROR_TIMEOUT after a stream-ordered wait gave up.
  tcaResult check_stream_waits();

 private:
  struct PeerGpu {
    bool reachable = false;
    std::string uuid;
    unsigned char* control = nullptr;         // the peer's control block, host address here
    unsigned char* control_device = nullptr;  // the same, device address
    PeerMapping control_mapping;              // for peers other than this rank
    HostRegistration control_pinned;
    IpcMapping signals_mapping;
    uint64_t* signals = nullptr;  // the peer's signal cells, device address here
    std::optional<PairCalibration> calibration;
  };
  // A peer's exported GPU allocation, mapped here, and the regions inside it.
  struct IpcImport {
    IpcMapping mapping;
    std::vector<uint64_t> region_ids;
  };
  // A peer's host region, mapped here and pinned for the GPU.
  struct HostImport {
    PeerMapping mapping;
    HostRegistration pinned;
  };
  // Whether no host kick is pending on the DMA stream (so a resident kick keeps the order).
  tcaResult dma_stream_idle(bool* idle);

  tcaResult choose_device();
  tcaResult set_up_device();
  tcaResult exchange_with_peers();
  struct GpuCard;
  tcaResult connect_peer(int peer, const GpuCard& card);
  tcaResult calibrate();
  tcaResult measure_pairs(const std::vector<std::pair<int, int>>& pairs, CalibrationCache* cache,
                          const std::string& cache_path);
  tcaResult read_path_overrides();
  tcaResult host_device_address(PeerRegion& region, std::vector<HostRegistration>* temporary,
                                unsigned char** out);
  // The device address of one end of a transfer; tcaPut/tcaGet buffers that need pinning are
  // pinned into `temporary`, which the run keeps.
  tcaResult end_address(PeerRegion& end, std::vector<HostRegistration>* temporary,
                        unsigned char** out);
  unsigned char* device_address_of_counter(const uint64_t* counter) const;
  // run_now's parts: an end's address (the caller's own buffer as it is, or with `pinned`
  // pinned into it if it is host memory), the liveness of both ends, and the copy enqueued
  // after those checks.
  tcaResult immediate_address(PeerRegion& end, std::vector<HostRegistration>* pinned,
                              unsigned char** out);
  tcaResult check_ends_alive(const Transfer& transfer) const;
  tcaResult copy_now(const Transfer& transfer, unsigned char* dst, const unsigned char* src);
  const std::atomic<uint64_t>* live_cell(int owner, uint64_t region_id) const;
  const std::atomic<uint64_t>* live_cell(const PeerRegion& region) const {
    return live_cell(region.owner, region.id);
  }
  // Closes the mappings of `owner`'s allocations whose regions are all freed: CUDA refuses to
  // map memory at an address that an open mapping of a freed allocation still covers.
  void close_dead_imports(int owner);
  // What a new mapping at `base` (for the import `key`) would alias: another open import, or
  // this rank's own tcaMalloc memory ("" if nothing). A guard: writes through such a mapping
  // would land in the wrong allocation, so attach() refuses it.
  std::string aliased_mapping(const std::pair<int, std::string>& key, const void* base) const;
  tcaResult enable_peer_access(int ordinal) const;

  Job& job_;
  CudaDomain* domain_ = nullptr;  // this rank's GPU memory
  int device_ = -1;               // the domain's device; -1: this rank has no usable GPU
  std::string uuid_;
  DeviceLimits limits_;
  std::vector<PeerGpu> peers_;
  DeviceMemory signals_;
  HostRegistration counters_pinned_;
  unsigned char* counters_device_ = nullptr;
  CudaStream dma_stream_;
  PinnedHostMemory stream_wait_timed_out_;  // an unsigned int the GPU sets when a wait gives up
  unsigned int* stream_wait_timed_out_device_ = nullptr;
  tuning::EngineChoice engine_choice_;    // TCA_CUDA_PATH, TCA_CUDA_CROSSOVER
  uint64_t resident_idle_ns_ = 0;         // TCA_CUDA_RESIDENT_IDLE_US
  bool stream_kicks_pending_ = false;     // host kicks on the DMA stream not yet waited for
  std::vector<uint64_t> kick_sequences_;  // host kicks announced to each owner
  std::vector<bool> kick_unpublished_;    // per owner: announced kicks not yet marked done
  bool kicks_unpublished_ = false;

  std::map<uint64_t, HostRegistration> pinned_regions_;  // own user regions, by region id
  std::vector<HostImport> host_imports_;
  std::map<std::pair<int, std::string>, IpcImport> ipc_imports_;  // by (owner, IPC handle)
  std::unique_ptr<ResidentServer> resident_;  // made at the first resident kick; ended first
};

}  // namespace tca
