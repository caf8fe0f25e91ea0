// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// An endpoint from this rank's worker to every rank's worker (this rank's own included): the
// worker addresses, of varying length, go round through the bootstrap collectively at start-up,
// and the endpoint to a rank is made when this rank first reaches it (reach()), so a start costs
// no connection per pair of ranks and a job makes only the connections it uses. Each
// endpoint reports a failed peer (its process gone, its connection reset) through UCX's error
// handling, so operations to a dead peer end in an error instead of waiting forever.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "tca/tca.h"
#include "transport/ucx/request.h"
#include "transport/ucx/worker.h"

namespace tca::ucx {

// Collective: every rank's `mine`, whatever their lengths (the lengths go round first, then the
// bytes padded to the longest). (*all)[r] is rank r's.
tcaResult allgather_bytes(Bootstrap& bootstrap, const std::vector<uint8_t>& mine,
                          std::vector<std::vector<uint8_t>>* all);

// The bootstrap's barrier, while a helper thread progresses `worker`: over transports whose data
// lands only inside the target's progress (tcp), a peer's flush may need this rank's progress
// to finish before it can reach the barrier.
tcaResult barrier_with_progress(Bootstrap& bootstrap, const Worker& worker);

class Endpoints {
 public:
  Endpoints() = default;
  // Collective over the bootstrap's ranks.
  static tcaResult connect(const Worker& worker, Bootstrap& bootstrap, Endpoints* out);
  Endpoints(Endpoints&& other) noexcept = default;
  Endpoints& operator=(Endpoints&& other) noexcept;
  Endpoints(const Endpoints&) = delete;
  Endpoints& operator=(const Endpoints&) = delete;
  // Closes whatever close() did not, without waiting for the peers.
  ~Endpoints();

  int size() const { return static_cast<int>(endpoints_.size()); }
  // Makes the endpoint to `rank` unless it exists (the caller holds the worker).
  tcaResult reach(int rank);
  // The endpoint to `rank`: null until reach(rank) made it.
  ucp_ep_h operator[](int rank) const { return endpoints_[static_cast<size_t>(rank)]; }
  // UCS_OK while the connection to `rank` is healthy, else the error UCX reported for it.
  ucs_status_t peer_status(int rank) const {
    return static_cast<ucs_status_t>(
        peers_[static_cast<size_t>(rank)].status.load(std::memory_order_relaxed));
  }

  // Collective: completes every operation at its target, then closes every endpoint once every
  // rank has done so. `check` bounds the waits (see wait()).
  tcaResult close(Bootstrap& bootstrap, const WaitCheck& check);

 private:
  struct Peer {  // what UCX's error handler writes (stable address: a heap array)
    std::atomic<int> status{UCS_OK};
  };
  static void on_error(void* peer, ucp_ep_h ep, ucs_status_t status);
  // Starts closing every endpoint (forcibly: nothing is flushed) and progresses until done.
  void force_close();

  const Worker* worker_ = nullptr;
  std::vector<std::vector<uint8_t>> addresses_;  // every rank's worker address
  std::vector<ucp_ep_h> endpoints_;              // null until reached
  std::unique_ptr<Peer[]> peers_;
};

}  // namespace tca::ucx
