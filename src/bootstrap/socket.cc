// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "bootstrap/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"

namespace tca {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until `fd` is ready for `events` or the deadline passes; false at the deadline.
tcaResult wait_ready(int fd, short events, Deadline deadline, bool* ready) {
  for (;;) {
    pollfd entry{fd, events, 0};
    const int count = poll(&entry, 1, poll_slice_ms(deadline));
    if (count > 0) {
      *ready = true;
      return TCA_SUCCESS;
    }
    if (count < 0 && errno != EINTR)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "poll on a bootstrap socket: {}", std::strerror(errno));
    if (Clock::now() >= deadline) {
      *ready = false;
      return TCA_SUCCESS;
    }
  }
}

void set_options(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

struct AddressList {
  addrinfo* head = nullptr;
  ~AddressList() {
    if (head != nullptr) freeaddrinfo(head);
  }
};

tcaResult resolve(const std::string& host, uint16_t port, bool passive, AddressList* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string service = std::to_string(port);
  const int status =
      getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &out->head);
  if (status != 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "cannot resolve '{}': {}", host, gai_strerror(status));
  return TCA_SUCCESS;
}

// Binds `fd` to `local_host` (any port) so that traffic leaves through its interface.
tcaResult bind_local(int fd, int family, const std::string& local_host) {
  if (local_host.empty()) return TCA_SUCCESS;
  AddressList local;
  TCA_CHECK(resolve(local_host, 0, true, &local));
  for (addrinfo* entry = local.head; entry != nullptr; entry = entry->ai_next)
    if (entry->ai_family == family && bind(fd, entry->ai_addr, entry->ai_addrlen) == 0)
      return TCA_SUCCESS;
  TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot bind a socket to {} (TCA_SOCKET_IFNAME): {}", local_host,
           std::strerror(errno));
}

// One connection attempt to `address`; *connected false where the root is not listening yet.
tcaResult try_connect(const addrinfo& address, const std::string& local_host, Deadline deadline,
                      Socket* out, int* error) {
  Socket socket(::socket(address.ai_family, address.ai_socktype, address.ai_protocol));
  if (!socket.valid())
    TCA_FAIL(TCA_ERROR_TRANSPORT, "socket() for the bootstrap: {}", std::strerror(errno));
  set_options(socket.fd());
  TCA_CHECK(bind_local(socket.fd(), address.ai_family, local_host));
  *error = 0;
  if (connect(socket.fd(), address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      *error = errno;
      return TCA_SUCCESS;
    }
    bool ready = false;
    TCA_CHECK(wait_ready(socket.fd(), POLLOUT, deadline, &ready));
    socklen_t length = sizeof *error;
    if (!ready)
      *error = ETIMEDOUT;
    else
      getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, error, &length);
    if (*error != 0) return TCA_SUCCESS;
  }
  *out = std::move(socket);
  return TCA_SUCCESS;
}

}  // namespace

Deadline deadline_after_ms(int64_t ms) { return Clock::now() + std::chrono::milliseconds(ms); }

int poll_slice_ms(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1000));
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) close(fd_);
}

int Socket::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

tcaResult Socket::send_all(const void* data, size_t bytes, Deadline deadline,
                           const char* what) const {
  const auto* next = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const ssize_t sent = ::send(fd_, next, bytes, MSG_NOSIGNAL);
    if (sent > 0) {
      next += sent;
      bytes -= static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      TCA_FAIL(TCA_ERROR_PEER_FAILED, "{} is gone (sending: {})", what, std::strerror(errno));
    bool ready = false;
    TCA_CHECK(wait_ready(fd_, POLLOUT, deadline, &ready));
    if (!ready) TCA_FAIL(TCA_ERROR_TIMEOUT, "{} took no data before the timeout", what);
  }
  return TCA_SUCCESS;
}

tcaResult Socket::recv_all(void* data, size_t bytes, Deadline deadline, const char* what) const {
  auto* next = static_cast<unsigned char*>(data);
  while (bytes > 0) {
    const ssize_t got = ::recv(fd_, next, bytes, 0);
    if (got > 0) {
      next += got;
      bytes -= static_cast<size_t>(got);
      continue;
    }
    if (got == 0) TCA_FAIL(TCA_ERROR_PEER_FAILED, "{} closed its connection", what);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      TCA_FAIL(TCA_ERROR_PEER_FAILED, "{} is gone (receiving: {})", what, std::strerror(errno));
    bool ready = false;
    TCA_CHECK(wait_ready(fd_, POLLIN, deadline, &ready));
    if (!ready) TCA_FAIL(TCA_ERROR_TIMEOUT, "nothing came from {} before the timeout", what);
  }
  return TCA_SUCCESS;
}

std::string Endpoint::text() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
}

tcaResult parse_endpoint(const std::string& text, const char* setting, Endpoint* out) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{}='{}' is not host:port", setting, text);
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port = text.substr(colon + 1);
  char* end = nullptr;
  const long value = std::strtol(port.c_str(), &end, 10);
  if (*end != '\0' || value < 1 || value > 65535 ||
      !std::isdigit(static_cast<unsigned char>(port[0])))
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{}='{}': the port must be a number in [1, 65535]",
             setting, text);
  out->host = host;
  out->port = static_cast<uint16_t>(value);
  return TCA_SUCCESS;
}

tcaResult interface_address(const std::string& ifname, std::string* address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) TCA_FAIL(TCA_ERROR_TRANSPORT, "getifaddrs: {}", std::strerror(errno));
  std::string v4, v6, names;
  for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    const int family = entry->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    if (names.find(std::string(entry->ifa_name) + " ") == std::string::npos)
      names += std::string(entry->ifa_name) + " ";
    if (ifname != entry->ifa_name) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr)
            : &reinterpret_cast<sockaddr_in6*>(entry->ifa_addr)->sin6_addr;
    inet_ntop(family, raw, text, sizeof text);
    (family == AF_INET ? v4 : v6) = text;
  }
  freeifaddrs(list);
  if (v4.empty() && v6.empty())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "TCA_SOCKET_IFNAME='{}' has no IP address here; interfaces with one: {}", ifname,
             names);
  *address = v4.empty() ? v6 : v4;
  return TCA_SUCCESS;
}

tcaResult listen_on(const std::string& local_host, uint16_t port, Socket* out, uint16_t* bound) {
  AddressList addresses;
  TCA_CHECK(resolve(local_host, port, true, &addresses));
  int error = 0;
  // IPv6 first where the host is not named: a dual-stack socket takes IPv4 connections too.
  std::vector<addrinfo*> order;
  for (addrinfo* entry = addresses.head; entry != nullptr; entry = entry->ai_next)
    order.push_back(entry);
  std::stable_partition(order.begin(), order.end(),
                        [](const addrinfo* a) { return a->ai_family == AF_INET6; });
  for (addrinfo* entry : order) {
    Socket socket(::socket(entry->ai_family, entry->ai_socktype, entry->ai_protocol));
    if (!socket.valid()) continue;
    const int one = 1;
    setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (entry->ai_family == AF_INET6) {
      const int zero = 0;
      setsockopt(socket.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    }
    if (bind(socket.fd(), entry->ai_addr, entry->ai_addrlen) != 0 ||
        listen(socket.fd(), SOMAXCONN) != 0) {
      error = errno;
      continue;
    }
    sockaddr_storage name{};
    socklen_t length = sizeof name;
    getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&name), &length);
    *bound = ntohs(name.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&name)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&name)->sin_port);
    set_options(socket.fd());
    *out = std::move(socket);
    return TCA_SUCCESS;
  }
  if (error == EADDRINUSE)
    TCA_FAIL(TCA_ERROR_TRANSPORT,
             "port {} is in use on this host (another job's root?): choose another with "
             "TCA_ROOT=host:port",
             port);
  TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot listen on port {}{}: {}", port,
           local_host.empty() ? "" : " of " + local_host, std::strerror(error));
}

tcaResult accept_before(const Socket& listener, Deadline deadline, Socket* out) {
  bool ready = false;
  TCA_CHECK(wait_ready(listener.fd(), POLLIN, deadline, &ready));
  if (!ready) return TCA_SUCCESS;
  Socket accepted(::accept(listener.fd(), nullptr, nullptr));
  if (!accepted.valid()) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return TCA_SUCCESS;
    TCA_FAIL(TCA_ERROR_TRANSPORT, "accept on the bootstrap's port: {}", std::strerror(errno));
  }
  set_options(accepted.fd());
  *out = std::move(accepted);
  return TCA_SUCCESS;
}

tcaResult connect_with_retries(const Endpoint& root, const std::string& local_host,
                               Deadline deadline, Socket* out) {
  auto pause = std::chrono::milliseconds(1);
  int error = 0;
  do {
    AddressList addresses;
    const tcaResult resolved = resolve(root.host, root.port, false, &addresses);
    if (resolved == TCA_SUCCESS) {
      for (addrinfo* entry = addresses.head; entry != nullptr; entry = entry->ai_next) {
        TCA_CHECK(try_connect(*entry, local_host, deadline, out, &error));
        if (out->valid()) return TCA_SUCCESS;
      }
    }
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
        pause, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())));
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  } while (Clock::now() < deadline);
  TCA_FAIL(TCA_ERROR_TIMEOUT, "the bootstrap's root {} could not be reached before the timeout{}",
           root.text(), error != 0 ? fmt::format(" (last: {})", std::strerror(error)) : "");
}

}  // namespace tca
