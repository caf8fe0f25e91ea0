// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The job as a transport sees it: who this rank and its peers are, the control blocks, the
// notification counters, the bootstrap and the memory domains. The context (core/context.h)
// implements it; transports hold a Job&, never the context. What the kick and drain paths read
// (ranks, peers, control block, counters) is plain data read inline; only calls made at set-up,
// in waits or in rare checks are virtual.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/host_memory.h"
#include "base/region.h"
#include "bootstrap/bootstrap.h"
#include "domain/memory_domain.h"
#include "tca/tca.h"

namespace tca {

class Transport;

struct PeerInfo {
  int pid = 0;
  int control_fd = -1;
  uint64_t control_inode = 0;  // identity of the control block's memfd
  // Hostname, boot id and pid namespace: equal means the same running kernel.
  uint64_t machine_hash = 0;
  // The host as tca treats it: the machine, unless TCA_HOST_ID splits one machine into several
  // (fake) hosts so that every path between hosts can run on one machine.
  uint64_t host_hash = 0;
};

class Job {
 public:
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // ---- plain data ----
  int rank() const { return rank_; }
  int size() const { return size_; }
  uint64_t job_key() const { return job_key_; }
  const PeerInfo& peer(int rank) const { return peers_[rank]; }
  bool same_host(int rank) const { return peers_[rank].host_hash == peers_[rank_].host_hash; }
  // Whether `rank` runs on this machine (its pid is meaningful here), whatever TCA_HOST_ID says.
  bool same_machine(int rank) const {
    return peers_[rank].machine_hash == peers_[rank_].machine_hash;
  }
  unsigned char* control_block() { return control_.data(); }
  uint64_t control_block_size() const { return control_block_bytes(size_); }
  const HostBlock* control_memory() const { return &control_; }
  int timeout_ms() const { return timeout_ms_; }
  // Name of memfd `serial` of rank `owner` in this job (serial 0 is the control block).
  std::string memfd_name(int owner, uint32_t serial) const {
    return host_memfd_name(job_key_, owner, serial);
  }
  // Notifications sent to (peer, slot) and consumed from (src, slot). They live in one
  // page-aligned block that GPU engines update too (stream-ordered and captured chains count
  // on the device), so host and GPU share one sequence per slot.
  uint64_t* notify_sent_counter(int peer, int slot) {
    return reinterpret_cast<uint64_t*>(notify_counters_.data()) +
           static_cast<size_t>(peer) * TCA_NOTIFY_SLOTS + slot;
  }
  uint64_t* notify_consumed_counter(int src, int slot) {
    return notify_sent_counter(size_ + src, slot);  // the consumed half follows the sent half
  }
  // The value the next notification of (this rank -> peer, slot) carries.
  uint64_t next_notify_value(int peer, int slot) {
    return reinterpret_cast<std::atomic<uint64_t>*>(notify_sent_counter(peer, slot))
               ->fetch_add(1, std::memory_order_relaxed) +
           1;
  }
  const HostBlock& notify_counter_block() const { return notify_counters_; }
  // Checks that a waited-for peer still runs (same machine: its process exists).
  tcaResult check_peer_alive(int peer) const;

  // ---- calls into the job ----
  virtual Bootstrap& bootstrap() = 0;
  // The memory domain of `kind` (never null; one without memory says why).
  virtual MemoryDomain* domain(tcaMemKind kind) const = 0;
  // The transport that reaches `peer`'s control block (records, liveness, notifications).
  virtual Transport* control_transport(int peer) const = 0;
  // Waits for the next notification on (src_rank, slot), as tcaWaitDMARecvDesc does.
  virtual tcaResult wait_notification(int src_rank, int slot, int* from) = 0;

 protected:
  Job() = default;
  ~Job() = default;

  int rank_ = 0;
  int size_ = 1;
  uint64_t job_key_ = 0;
  int timeout_ms_ = 60000;
  std::vector<PeerInfo> peers_;
  HostBlock control_;
  HostBlock notify_counters_;  // sent[peer * SLOTS + slot], then consumed[src * SLOTS + slot]
};

}  // namespace tca
