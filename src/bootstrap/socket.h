// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// TCP sockets for the tcp bootstrap: an owner of one descriptor, listening and connecting with
// deadlines, and whole-buffer reads and writes that give up at a deadline. Nothing here blocks
// past the deadline it is given.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tca/tca.h"

namespace tca {

using Deadline = std::chrono::steady_clock::time_point;
Deadline deadline_after_ms(int64_t ms);
// What one poll() may wait: the time left before the deadline, at most a second (a wait loops
// on it, so signals and the clock are looked at again), never negative.
int poll_slice_ms(Deadline deadline);

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();

  // Writes or reads exactly `bytes`; TCA_ERROR_TIMEOUT at the deadline, TCA_ERROR_PEER_FAILED
  // where the other end closed. `what` names the other end in messages.
  tcaResult send_all(const void* data, size_t bytes, Deadline deadline, const char* what) const;
  tcaResult recv_all(void* data, size_t bytes, Deadline deadline, const char* what) const;

 private:
  int fd_ = -1;
};

// An address to listen on or reach: a host name or numeric address and a port.
struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string text() const;
};

// Parses "host:port" or "[v6-address]:port".
tcaResult parse_endpoint(const std::string& text, const char* setting, Endpoint* out);

// The numeric address of interface `ifname` (IPv4 first), for binding; an error names the
// interfaces there are.
tcaResult interface_address(const std::string& ifname, std::string* address);

// Listens on `local_host` ("" for every interface) and `port` (0: one the system picks).
tcaResult listen_on(const std::string& local_host, uint16_t port, Socket* out, uint16_t* bound);

// Waits for one connection until the deadline; *out stays invalid where none came.
tcaResult accept_before(const Socket& listener, Deadline deadline, Socket* out);

// Connects to `root`, from `local_host` where not empty, trying again while the root is not
// listening yet, until the deadline.
tcaResult connect_with_retries(const Endpoint& root, const std::string& local_host,
                               Deadline deadline, Socket* out);

}  // namespace tca
