// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong's host-kicked tca paths: chains on the shm, mpi, ucx and auto transports (and their
// block-stride forms), CPU stores through a mapping (shm.pio), the immediate tcaPut (tca.put),
// and ref.memcpy.
#include <tca/tca.h>

#include <cstring>
#include <numeric>
#include <utility>

#include "pingpong.h"
#include "tca_harness/check.h"

namespace tca_pingpong {

using tca_harness::check;
using tca_harness::describe_failure;

Layout contiguous_layout(size_t bytes) { return {{bytes, bytes, 1}, false}; }

Layout strided_layout(size_t bytes) {
  const size_t width = bytes < kBlockBytes ? bytes : std::gcd(bytes, kBlockBytes);
  return {{width, 2 * width, bytes / width}, true};
}

void wait_for_notification(int peer) {
  check(tcaWaitDMARecvDesc(peer, kSlot, nullptr), "tcaWaitDMARecvDesc");
}

std::function<std::string()> needs_tca_path(tcaPath path, const Endpoint* endpoint) {
  return [path, endpoint] {
    int available = 0;
    check(tcaPathAvailable(path, endpoint->peer, &available), "tcaPathAvailable");
    return available ? std::string() : std::string("tcaPathAvailable says no");
  };
}

namespace {

// A chained DMA descriptor built once; every message is one kick.
class ChainChannel final : public Channel {
 public:
  ChainChannel(tcaPath path, const Layout& layout, const tcaHandle& peer_recv,
               const tcaHandle& my_send, int peer)
      : peer_(peer) {
    check(tcaDescNew(&desc_), "tcaDescNew");
    if (layout.strided)
      check(tcaDescSetMemcpy2D(desc_, &peer_recv, 0, layout.pitch, &my_send, 0, layout.pitch,
                               layout.width, layout.count, TCA_FLAG_NOTIFY, kSlot),
            "tcaDescSetMemcpy2D");
    else
      check(tcaDescSetMemcpy(desc_, &peer_recv, 0, &my_send, 0, layout.bytes(), TCA_FLAG_NOTIFY,
                             kSlot),
            "tcaDescSetMemcpy");
    check(tcaDescSetPath(desc_, path), "tcaDescSetPath");
    check(tcaDescSet(desc_, kChannel), "tcaDescSet");
  }
  ~ChainChannel() override { tcaDescFree(desc_); }

  void send() override {
    check(tcaStartDMADesc(desc_), "tcaStartDMADesc");
    // As a real sender must before it may touch its send buffer again.
    check(tcaWaitDMAC(kChannel), "tcaWaitDMAC");
  }
  void wait_for_peer() override { wait_for_notification(peer_); }

 private:
  tcaDesc desc_ = nullptr;
  int peer_;
};

// The immediate form: nothing is kept between messages.
class PutChannel final : public Channel {
 public:
  PutChannel(const tcaHandle& peer_recv, const unsigned char* my_send, size_t bytes, int peer)
      : peer_recv_(peer_recv), my_send_(my_send), bytes_(bytes), peer_(peer) {}

  void send() override {
    check(tcaPut(&peer_recv_, 0, my_send_, bytes_), "tcaPut");  // complete on return
    check(tcaNotify(peer_, kSlot), "tcaNotify");
  }
  void wait_for_peer() override { wait_for_notification(peer_); }

 private:
  tcaHandle peer_recv_;
  const unsigned char* my_send_;
  size_t bytes_;
  int peer_;
};

// Plain CPU stores through a mapping of the peer's buffer, then a fence and a notification.
class PioChannel final : public Channel {
 public:
  PioChannel(void* peer_recv, const unsigned char* my_send, size_t bytes, int peer)
      : peer_recv_(peer_recv), my_send_(my_send), bytes_(bytes), peer_(peer) {}

  void send() override {
    std::memcpy(peer_recv_, my_send_, bytes_);
    check(tcaPIOFence(), "tcaPIOFence");
    check(tcaNotify(peer_, kSlot), "tcaNotify");
  }
  void wait_for_peer() override { wait_for_notification(peer_); }

 private:
  void* peer_recv_;
  const unsigned char* my_send_;
  size_t bytes_;
  int peer_;
};

// Reference: what one core copies on its own (rank 0 only; nothing to wait for).
class LocalMemcpyChannel final : public Channel {
 public:
  LocalMemcpyChannel(const unsigned char* from, unsigned char* to, size_t bytes)
      : from_(from), to_(to), bytes_(bytes) {}

  void send() override {
    std::memcpy(to_, from_, bytes_);
    asm volatile("" ::: "memory");  // keeps repeated identical copies from being merged
  }
  void wait_for_peer() override {}

 private:
  const unsigned char* from_;
  unsigned char* to_;
  size_t bytes_;
};

}  // namespace

std::unique_ptr<Channel> open_chain(tcaPath path, const Layout& layout, const tcaHandle& peer_recv,
                                    const tcaHandle& my_send, int peer) {
  return std::make_unique<ChainChannel>(path, layout, peer_recv, my_send, peer);
}

std::unique_ptr<Channel> open_put(const tcaHandle& peer_recv, const unsigned char* my_send,
                                  size_t bytes, int peer) {
  return std::make_unique<PutChannel>(peer_recv, my_send, bytes, peer);
}

void add_tca_host_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  auto chain = [e](tcaPath path) {
    return [e, path](const Layout& layout) -> std::unique_ptr<Channel> {
      return open_chain(path, layout, e->peer_recv_handle, e->send_handle, e->peer);
    };
  };
  auto pio_window = std::make_shared<void*>(nullptr);  // set once the path is known to work
  paths->push_back({"shm.chain", false, contiguous_layout, needs_tca_path(TCA_PATH_SHM, e),
                    chain(TCA_PATH_SHM)});
  paths->push_back(
      {"shm.chain2d", false, strided_layout, needs_tca_path(TCA_PATH_SHM, e), chain(TCA_PATH_SHM)});
  paths->push_back(
      {"shm.pio", false, contiguous_layout,
       [e, pio_window] {
         const tcaResult result =
             tcaPIOPointer(pio_window.get(), &e->peer_recv_handle, 0, e->buffer_bytes);
         return result == TCA_SUCCESS ? std::string() : describe_failure(result, "tcaPIOPointer");
       },
       [e, pio_window](const Layout& layout) -> std::unique_ptr<Channel> {
         return std::make_unique<PioChannel>(*pio_window, e->send, layout.bytes(), e->peer);
       }});
  paths->push_back({"tca.put", false, contiguous_layout, [] { return std::string(); },
                    [e](const Layout& layout) -> std::unique_ptr<Channel> {
                      return open_put(e->peer_recv_handle, e->send, layout.bytes(), e->peer);
                    }});
  Path pageable{"tca.put_pageable", false, contiguous_layout, [] { return std::string(); },
                [e](const Layout& layout) -> std::unique_ptr<Channel> {
                  return open_put(e->peer_recv_handle, e->pageable_send.get(), layout.bytes(),
                                  e->peer);
                }};
  pageable.pageable_source = true;
  paths->push_back(std::move(pageable));
  paths->push_back({"mpi.chain", false, contiguous_layout, needs_tca_path(TCA_PATH_MPI, e),
                    chain(TCA_PATH_MPI)});
  paths->push_back(
      {"mpi.chain2d", false, strided_layout, needs_tca_path(TCA_PATH_MPI, e), chain(TCA_PATH_MPI)});
}

void add_memcpy_path(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  paths->push_back({"ref.memcpy", true, contiguous_layout, [] { return std::string(); },
                    [e](const Layout& layout) -> std::unique_ptr<Channel> {
                      return std::make_unique<LocalMemcpyChannel>(e->send, e->recv, layout.bytes());
                    }});
}

namespace {

// ucx.chain: the chain on TCA_PATH_UCX for cpu>cpu and, where both ranks have a GPU, gpu>gpu,
// cpu>gpu and gpu>cpu; ucx.chain2d: the block-stride form (one put per block).
void add_ucx_chain_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  for (const auto& [src, dst] : kNetworkMemoryPairs) {
    const bool needs_gpu = src == TCA_MEM_GPU || dst == TCA_MEM_GPU;
    paths->push_back({"ucx.chain", false, contiguous_layout,
                      [e, needs_gpu] {
                        if (needs_gpu && !e->gpu) return std::string("no GPU on both ranks");
                        return needs_tca_path(TCA_PATH_UCX, e)();
                      },
                      [e, src = src, dst = dst](const Layout& layout) -> std::unique_ptr<Channel> {
                        return open_chain(TCA_PATH_UCX, layout, e->peer_recv_handle_of(dst),
                                          e->send_handle_of(src), e->peer);
                      },
                      src, dst});
  }
  paths->push_back({"ucx.chain2d", false, strided_layout, needs_tca_path(TCA_PATH_UCX, e),
                    [e](const Layout& layout) -> std::unique_ptr<Channel> {
                      return open_chain(TCA_PATH_UCX, layout, e->peer_recv_handle, e->send_handle,
                                        e->peer);
                    }});
}

// auto.chain: the chain on TCA_PATH_AUTO, which takes per size the transport the start-up
// calibration found fastest where several reach the peer (the header prints the tables).
void add_auto_chain_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  const std::pair<tcaMemKind, tcaMemKind> kinds[] = {{TCA_MEM_CPU, TCA_MEM_CPU},
                                                     {TCA_MEM_GPU, TCA_MEM_GPU}};
  for (const auto& [src, dst] : kinds) {
    const bool needs_gpu = src == TCA_MEM_GPU;
    paths->push_back({"auto.chain", false, contiguous_layout,
                      [e, needs_gpu] {
                        return needs_gpu && !e->gpu ? std::string("no GPU on both ranks")
                                                    : std::string();
                      },
                      [e, src = src, dst = dst](const Layout& layout) -> std::unique_ptr<Channel> {
                        return open_chain(TCA_PATH_AUTO, layout, e->peer_recv_handle_of(dst),
                                          e->send_handle_of(src), e->peer);
                      },
                      src, dst});
  }
}

}  // namespace

void add_tca_network_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  add_ucx_chain_paths(endpoint, paths);
  add_auto_chain_paths(endpoint, paths);
}

}  // namespace tca_pingpong
