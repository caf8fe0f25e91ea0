// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The per-process state of an initialized tca job: ranks, job key, regions, control block,
// transports, notification counters and DMA channels.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/host_memory.h"
#include "base/region.h"
#include "bootstrap/bootstrap.h"
#include "core/desc.h"
#include "core/init_clock.h"
#include "domain/memory_domain.h"
#include "tca/tca.h"
#include "transport/job.h"
#include "transport/transport.h"
#include "tuning/transport_choice.h"

namespace tca {

// The job, as transports see it (transport/job.h), and everything the API calls.
class Context final : public Job {
 public:
  static tcaResult create(const tcaConfig* config, std::unique_ptr<Context>* out);
  ~Context();

  // ---- the Job ----
  Bootstrap& bootstrap() override { return *bootstrap_; }
  MemoryDomain* domain(tcaMemKind kind) const override { return domains_[kind].get(); }
  Transport* control_transport(int peer) const override { return controller_[peer]; }
  tcaResult wait_notification(int src_rank, int slot, int* from) override;

  // ---- what the API calls ----
  // The first transport of `path` in this build, or null.
  Transport* find_transport(tcaPath path) const;
  void set_timeout_ms(int timeout_ms) {
    timeout_ms_ = timeout_ms;
    bootstrap_->set_timeout_ms(timeout_ms);
  }
  // The transport AUTO takes between this rank's memory of kind `local` and `peer`'s of kind
  // `remote` (null where none reaches).
  Transport* default_transport(int peer, tcaMemKind local, tcaMemKind remote) const {
    return default_[peer][2 * local + remote];
  }
  // The transport AUTO takes between this rank's and `peer`'s host memory (which also carries
  // the control traffic to `peer`).
  Transport* default_transport(int peer) const { return controller_[peer]; }
  // The transport AUTO takes for a transfer of `bytes` between these memory kinds: the choice
  // by size where one was measured for the peer's class, else the default (null: none reaches).
  Transport* auto_transport(int peer, tcaMemKind local, tcaMemKind remote, uint64_t bytes) const;
  // The size table behind it ("" where AUTO does not choose by size), transports by name.
  std::string choice_table(int peer, tcaMemKind local, tcaMemKind remote) const;
  // The transport of `path` to `peer` (AUTO: the default between host memories), or
  // TCA_ERROR_UNREACHABLE where it reaches no memory of `peer`.
  tcaResult transport_for(tcaPath path, int peer, Transport** out) const;
  // The transport for one transfer: AUTO takes the default for its memory kinds; a named path
  // is taken where it reaches, else TCA_ERROR_UNREACHABLE.
  tcaResult transport_for(tcaPath path, const Transfer& transfer, Transport** out) const;
  // TCA_MEM_GPU when `ptr` is device memory (an unregistered tcaPut/tcaGet buffer).
  tcaMemKind local_memory_kind(const void* ptr) const;

  tcaResult malloc_memory(void** ptr, size_t bytes, tcaMemKind kind);
  tcaResult free_memory(void* ptr);
  tcaResult create_handle(void* ptr, size_t bytes, tcaMemKind kind, tcaHandle* out);
  tcaResult destroy_handle(const tcaHandle* handle);
  // Checks a handle and returns the region it names (imported and attached if remote), and
  // whether it is still alive; `liveness` false leaves that to a transfer run at once, whose run
  // reads it after announcing itself to the owner (a second read, remote across hosts, would
  // only add a round trip).
  tcaResult resolve(const tcaHandle* handle, PeerRegion** out, bool liveness = true);
  tcaResult region_alive(const PeerRegion& region, bool* alive);

  tcaResult notify(int dst_rank, int slot);
  tcaResult test_notification(int src_rank, int slot, int* arrived, int* from);
  tcaResult fence();

  // DMA channels: runs kicked on a channel and not yet waited for.
  void track_run(int channel, PreparedRun* run);
  tcaResult wait_channel(int channel);
  void forget_run(PreparedRun* run);  // a descriptor being freed drops its runs
  const std::vector<PreparedRun*>& runs_in_flight(int channel) const { return in_flight_[channel]; }
  DescRegistry& descriptors() { return descriptors_; }

 private:
  Context() = default;
  tcaResult init(const tcaConfig* config);
  tcaResult init_domains();
  tcaResult init_transports(const std::string& forced, InitClock& clock);
  tcaResult choose_defaults(const std::string& forced);
  // Collective: measures (or reads from the cache) the choice between transports by size.
  tcaResult calibrate_choices();
  struct ChoicePlan;
  tcaResult plan_choices(std::vector<ChoicePlan>* plan, std::vector<std::string>* keys,
                         ChoiceCache* cache);
  tcaResult measure_choice(const ChoicePlan& item, std::vector<std::vector<double>>* micros);
  tcaResult pingpong(int partner, bool initiator, Transport* transport, PeerRegion* mine,
                     PeerRegion* theirs, std::vector<double>* micros);
  Transport* first_of_id(int id) const;
  int choice_class(int peer, tcaMemKind local, tcaMemKind remote) const {
    return 4 * (same_host(peer) ? 0 : 1) + 2 * local + remote;
  }
  // Consumes one arrived notification (no progress); true if there was one.
  bool consume_arrival(int src_rank, int slot, int* from);
  // Fails a wait for (src_rank, slot) with a message naming what arrived and what is outstanding.
  tcaResult timed_out(int src_rank, int slot);
  tcaResult progress_transports();
  // Whether a wait for `src_rank` sleeps on the wake word instead of yielding.
  bool sleeps_waiting_for(int src_rank) const;
  tcaResult register_with_transports(PeerRegion& region);
  RegionRecord record_of(const PeerRegion& region) const;
  // Withdraws an own region: record first, then waits for peers' transfers in flight into it.
  tcaResult unpublish(PeerRegion& region);
  tcaResult await_transfers_in_flight(const PeerRegion& region);
  uint64_t inflight_done(int peer, int lane);
  // decode_handle, skipped for the bytes of a handle decoded before (the last kDecodedHandles
  // distinct ones): its outcome depends on those bytes and this job alone. What the handle
  // names is still looked up, and its liveness read, at every use.
  tcaResult decode(const tcaHandle* handle, WireHandle* wire);
  tcaResult import_region(const WireHandle& wire, PeerRegion** out);
  tcaResult check_against_record(const WireHandle& wire, const RegionRecord& record) const;
  tcaResult refuse_unlike_import(const WireHandle& wire);

  std::unique_ptr<Bootstrap> bootstrap_;
  uint64_t next_region_id_ = 1;

  std::array<std::unique_ptr<MemoryDomain>, 2> domains_;  // by tcaMemKind
  std::map<uint64_t, PeerRegion*> own_regions_;           // live registrations, by region id
  // Every region ever resolved, kept until finalize so prepared chains never dangle.
  std::map<std::pair<int, uint64_t>, std::unique_ptr<PeerRegion>> known_regions_;

  // Every transport's paths, in registry order (destroyed in reverse order).
  std::vector<std::unique_ptr<Transport>> transports_;
  std::vector<std::array<Transport*, 4>> default_;  // per peer, [2 * local kind + remote kind]
  std::vector<Transport*> controller_;              // per peer
  std::vector<Transport*> order_;       // one per id, in order of preference (forced first)
  bool forced_ = false;                 // a transport was named: AUTO does not choose by size
  std::vector<uint8_t> gpu_ranks_;      // per rank: 1 where it has a usable GPU
  std::array<ChoiceTable, 8> choices_;  // by choice_class
  int any_source_cursor_ = 0;
  bool oversubscribed_ = false;  // more ranks on this host than cores: waits yield at once
  uint32_t poll_misses_ = 0;     // polls that found nothing (test_notification)
  std::array<std::vector<PreparedRun*>, TCA_DMA_CHANNELS> in_flight_;
  static constexpr int kDecodedHandles = 4;
  std::array<WireHandle, kDecodedHandles> decoded_{};  // the first decoded_count_ are in use
  int decoded_count_ = 0;
  int decoded_next_ = 0;      // the entry the next new handle replaces
  DescRegistry descriptors_;  // destroyed before the transports that prepared their runs
};

// The process's context, or null outside tcaInit..tcaFinalize.
Context* current_context();

}  // namespace tca
