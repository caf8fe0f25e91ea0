// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The persistent collective object behind tcaColl, shared by the persistent and the one-shot
// API. An iteration is a list of actions prebuilt for each parity of the iteration counter
// (scratch is double-buffered): post credits, wait for credits and notifications, kick
// chains, drain the channel, reduce and copy locally.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/device_engine.h"
#include "coll/local_ops.h"
#include "coll/schedule.h"
#include "coll/team.h"
#include "coll/waiter.h"
#include "tca/tca_coll.h"

namespace tca::coll {

// The algorithm TCA_COLL_AUTO stands for (the measured table), else `requested`; neighbor
// exchange becomes ring on an odd number of ranks.
tcaResult resolve_algorithm(tcaCollKind kind, tcaMemKind memory, size_t result_bytes, int ranks,
                            tcaCollAlgorithm requested, tcaCollAlgorithm* resolved);
tcaResult map_positions(tcaCollAlgorithm algorithm, const tcaCollTopology* topology, int ranks,
                        std::vector<int>* rank_at);

// Checks a collective's arguments. *in_place tells whether sendbuf is the in-place position
// inside recvbuf.
// TCA_ERROR_INVALID_ARGUMENT unless `coll` is a live object from tcaCollNew.
tcaResult check_live(tcaColl coll);

tcaResult check_arguments(tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
                          const void* sendbuf, const void* recvbuf, const tcaCollConfig& config,
                          int rank, int ranks, bool* in_place);

struct Action {
  enum Kind : uint8_t { kPostCredit, kAwaitCredit, kKick, kNotify, kAwait, kDrain, kReduce, kCopy };
  Kind kind = kKick;
  int peer = 0;
  int slot = 0;
  tcaDesc desc = nullptr;
  void* dst = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  size_t length = 0;
};

}  // namespace tca::coll

struct tcaColl_st {
 public:
  // Collective. On failure nothing is left allocated here.
  static tcaResult create(tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
                          const void* sendbuf, void* recvbuf, const tcaCollConfig& config,
                          std::unique_ptr<tcaColl_st>* out);
  tcaColl_st(const tcaColl_st&) = delete;
  tcaColl_st& operator=(const tcaColl_st&) = delete;
  ~tcaColl_st() = default;  // releases nothing of tca: release() does, while tca lives

  tcaResult start();
  // Runs the started iteration as far as it can (block: to its end); *done once it ended.
  tcaResult progress(bool block, bool* done);
  // Frees chains, registrations and scratch (local; tcaCollFree adds the barrier).
  tcaResult release();

  tcaCollAlgorithm algorithm() const { return algorithm_; }
  bool running() const { return running_; }
  // Whether the object's registrations belong to the running tca job (a tcaFinalize since
  // its creation freed everything it had). Always false for an object of zero elements.
  bool belongs_to_current_job() const;
  // A local copy between buffers of the collective's memory kind.
  tcaResult copy_local(void* dst, const void* src, size_t bytes);
  // The GPU program of a TCA_MEM_GPU collective (null for host memory).
  tca::coll::DeviceEngine* device() const { return device_.get(); }
  bool failed() const { return failed_; }
  // The ranks that take part; rank_ and ranks_ and the schedule's peers count within it.
  const tca::coll::TeamView& team() const { return team_; }
  bool on_gpu() const { return memory_ == TCA_MEM_GPU; }
  // A GPU collective whose schedule the host runs as chains through the transports (some rank is
  // out of CUDA IPC's reach, e.g. on another host) instead of a GPU program.
  bool host_scheduled() const { return host_scheduled_; }
  // What a trace records of an iteration of the GPU program (device() not null).
  struct DeviceTraceFields {
    const char* op;
    const char* algorithm;
    uint64_t bytes;
    int ranks;
    const char* protocol;
    int channels;
  };
  DeviceTraceFields device_trace_fields() const;

 private:
  tcaColl_st() = default;
  tcaResult register_buffers(const tca::coll::Schedule& schedule);
  tcaResult register_own(const tca::coll::Schedule& schedule);  // this rank's part alone
  tcaResult build_iterations(const tca::coll::Schedule& schedule,
                             const std::vector<int>& writers_to_me);
  tcaResult chain_for(const tca::coll::Op& op, int parity, tcaDesc* out);
  void* address(const tca::coll::Place& place, int parity) const;
  tcaResult advance(bool block, bool* done);
  tcaResult finish_or_fail(tcaResult result);

  tcaCollAlgorithm algorithm_ = TCA_COLL_RING;
  tcaMemKind memory_ = TCA_MEM_CPU;
  tca::coll::TeamView team_;
  int rank_ = 0;
  int ranks_ = 1;
  size_t send_bytes_ = 0;
  size_t recv_bytes_ = 0;
  const void* sendbuf_ = nullptr;
  void* recvbuf_ = nullptr;
  bool in_place_ = false;
  bool host_scheduled_ = false;
  std::unique_ptr<tca::coll::LocalOps> local_;       // host memory, host-scheduled GPU memory
  std::unique_ptr<tca::coll::DeviceEngine> device_;  // GPU memory
  tca::coll::NotificationWaiter waiter_;

  // Registrations and scratch (each end of a chain is a handle).
  bool recv_registered_ = false;
  bool send_registered_ = false;
  tcaHandle recv_handle_{};
  tcaHandle send_handle_{};
  unsigned char* scratch_ = nullptr;  // two parities of scratch_bytes_ each
  size_t scratch_bytes_ = 0;
  tcaHandle scratch_handle_{};
  std::vector<tcaHandle> peer_recv_;
  std::vector<tcaHandle> peer_scratch_;

  std::vector<tcaDesc> chains_;
  std::array<std::vector<tca::coll::Action>, 2> iteration_;  // by parity

  uint64_t started_ = 0;  // iterations begun
  size_t next_action_ = 0;
  bool running_ = false;
  bool failed_ = false;
};
