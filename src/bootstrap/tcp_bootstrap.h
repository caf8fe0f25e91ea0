// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The tcp bootstrap: ranks found through the environment (bootstrap/launch_env.h), joined at
// rank 0 over authenticated sockets (bootstrap/tcp_join.cc), exchanges in rounds through rank 0
// (bootstrap/tcp_bootstrap.cc; messages in bootstrap/tcp_wire.h).
#pragma once

#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/launch_env.h"
#include "bootstrap/socket.h"
#include "bootstrap/tcp_wire.h"

namespace tca {

class TcpBootstrap final : public Bootstrap {
 public:
  // Collective over the environment's ranks: returns once every rank has joined, or fails by
  // the timeout naming the ranks that did not.
  static tcaResult create(const TcpEnvironment& environment, int timeout_ms,
                          std::unique_ptr<Bootstrap>* out);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "tcp"; }
  void set_timeout_ms(int timeout_ms) override { timeout_ms_ = timeout_ms; }
  tcaResult allgather(const void* mine, void* all, size_t bytes) override;
  tcaResult broadcast(void* data, size_t bytes, int root) override;
  tcaResult barrier() override;

 private:
  TcpBootstrap(const TcpEnvironment& environment, int timeout_ms);

  // Joining (tcp_join.cc).
  tcaResult join_as_root();
  tcaResult admit(Socket connection, Deadline deadline);
  tcaResult refuse_missing(Deadline started);
  tcaResult join_as_rank();

  // A round: this rank's frame and part go in, `result` (result_bytes) comes back.
  tcaResult round(const Frame& mine, const void* part, void* result, size_t result_bytes);
  tcaResult root_round(const Frame& mine, const void* part, void* result, size_t result_bytes);
  tcaResult rank_round(const Frame& mine, const void* part, void* result, size_t result_bytes);
  tcaResult rank_round_once(const Frame& mine, const void* part, void* result, size_t result_bytes);
  tcaResult receive_parts(const Frame& mine, const void* part, std::vector<uint8_t>* parts,
                          Deadline deadline);
  tcaResult receive_part(int rank, const Frame& mine, std::vector<uint8_t>* parts,
                         Deadline deadline);
  // Tells every connected rank why the round failed; returns `code` with `reason` recorded.
  tcaResult fail_everyone(tcaResult code, const std::string& reason);

  TcpEnvironment environment_;
  int rank_ = 0;
  int size_ = 1;
  int timeout_ms_ = 60000;
  uint32_t sequence_ = 0;
  std::string broken_;         // why an earlier exchange failed: every later one fails the same way
  Socket root_;                // ranks 1..N-1: the connection to rank 0
  std::vector<Socket> ranks_;  // rank 0: the connection to each other rank
  std::vector<int> pids_;      // rank 0: each rank's process id, for messages
};

}  // namespace tca
