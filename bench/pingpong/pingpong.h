// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong's pieces (bench/pingpong/): what a path is and how the driver (main.cc) runs it.
// Each implementation file adds its paths: tca_host.cc (the host-kicked tca paths and
// ref.memcpy), tca_gpu.cc (the CUDA paths and ref.cuda_memcpy_peer), mpi.cc (ref.mpi_sendrecv),
// nccl.cc (ref.nccl_sendrecv), ucx.cc (ref.ucx_put); registry.cc lists them in the table's
// order, and only it knows which were built.
#pragma once

#include <tca/tca.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tca_harness/verify.h"

namespace tca_pingpong {

constexpr int kChannel = 0;           // DMA channel of every descriptor
constexpr int kSlot = 0;              // notification slot; ping-pong never has two in flight
constexpr size_t kBlockBytes = 4096;  // widest block of the *.chain2d paths

// A message's blocks, and whether it is sent as one block-stride (2D) transfer.
struct Layout : tca_harness::Blocks {
  bool strided = false;
};

Layout contiguous_layout(size_t bytes);
// Blocks of min(bytes, 4 KiB) — for sizes that are no multiple of 4 KiB, the largest power of
// two dividing them — one block-width apart, so the gaps must come through untouched.
Layout strided_layout(size_t bytes);

// One way of moving a message to the peer.
class Channel {
 public:
  Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  virtual ~Channel() = default;
  virtual void send() = 0;           // moves the message and signals the peer
  virtual void wait_for_peer() = 0;  // returns once the peer's message is visible here
  // Seconds per message of `iterations` round trips for a channel that runs them itself (on
  // the GPU); negative where the host drives each message.
  virtual double self_timed(int /*rank*/, int /*iterations*/) { return -1; }
};

// Waits for the peer's notification in kSlot.
void wait_for_notification(int peer);

// This rank's side of the job: its peer and the buffers every path uses.
struct Endpoint {
  int rank = 0;
  int peer = 1;
  std::string mpi_missing;  // why ref.mpi_sendrecv cannot run, or ""
  size_t buffer_bytes = 0;
  unsigned char* send = nullptr;
  unsigned char* recv = nullptr;
  std::unique_ptr<unsigned char[]> pageable_send;  // plain heap memory, never registered
  tcaHandle send_handle{};
  tcaHandle recv_handle{};
  tcaHandle peer_recv_handle{};
  // The same in GPU memory, where both ranks have a GPU (CUDA builds).
  bool gpu = false;
  unsigned char* gpu_send = nullptr;
  unsigned char* gpu_recv = nullptr;
  tcaHandle gpu_send_handle{};
  tcaHandle gpu_recv_handle{};
  tcaHandle peer_gpu_recv_handle{};

  unsigned char* send_of(tcaMemKind kind) const { return kind == TCA_MEM_GPU ? gpu_send : send; }
  unsigned char* recv_of(tcaMemKind kind) const { return kind == TCA_MEM_GPU ? gpu_recv : recv; }
  const tcaHandle& send_handle_of(tcaMemKind kind) const {
    return kind == TCA_MEM_GPU ? gpu_send_handle : send_handle;
  }
  const tcaHandle& peer_recv_handle_of(tcaMemKind kind) const {
    return kind == TCA_MEM_GPU ? peer_gpu_recv_handle : peer_recv_handle;
  }
};

struct Path {
  std::string name;
  bool local = false;  // rank 0 alone
  Layout (*layout)(size_t bytes) = contiguous_layout;
  // Why this rank cannot run the path ("" if it can); called once, before any size.
  std::function<std::string()> unavailable_reason;
  std::function<std::unique_ptr<Channel>(const Layout&)> open;
  tcaMemKind src = TCA_MEM_CPU;  // where the message starts
  tcaMemKind dst = TCA_MEM_CPU;  // where it lands
  size_t max_bytes = SIZE_MAX;   // larger messages are not what the path is for
  bool pageable_source = false;  // the message starts in Endpoint::pageable_send
};

// Where `path`'s message starts on this rank.
inline unsigned char* source_of(const Path& path, const Endpoint& endpoint) {
  return path.pageable_source ? endpoint.pageable_send.get() : endpoint.send_of(path.src);
}

// tcaPathAvailable's answer for the peer, as a path's unavailable_reason.
std::function<std::string()> needs_tca_path(tcaPath path, const Endpoint* endpoint);

// A chained DMA descriptor on `path` built once; every message is one kick.
std::unique_ptr<Channel> open_chain(tcaPath path, const Layout& layout, const tcaHandle& peer_recv,
                                    const tcaHandle& my_send, int peer);

// tcaPut of the message into the peer's buffer (carried as tcaPut carries it: on the transport
// it chooses, completed in the call), then tcaNotify.
std::unique_ptr<Channel> open_put(const tcaHandle& peer_recv, const unsigned char* my_send,
                                  size_t bytes, int peer);

// Source and destination memory of the network paths (ucx.chain, ref.ucx_put), in the table's
// order: cpu>cpu, then the pairs that need a GPU on both ranks.
inline constexpr std::pair<tcaMemKind, tcaMemKind> kNetworkMemoryPairs[] = {
    {TCA_MEM_CPU, TCA_MEM_CPU},
    {TCA_MEM_GPU, TCA_MEM_GPU},
    {TCA_MEM_CPU, TCA_MEM_GPU},
    {TCA_MEM_GPU, TCA_MEM_CPU}};

// The paths of each implementation, appended in the table's order (registry.cc).
void add_tca_host_paths(Endpoint& endpoint, std::vector<Path>* paths);     // shm.*, mpi.*
void add_memcpy_path(Endpoint& endpoint, std::vector<Path>* paths);        // ref.memcpy
void add_tca_network_paths(Endpoint& endpoint, std::vector<Path>* paths);  // ucx.*, auto.*
void add_mpi_paths(Endpoint& endpoint, std::vector<Path>* paths);          // ref.mpi_sendrecv
void add_ucx_paths(Endpoint& endpoint, std::vector<Path>* paths);          // ref.ucx_put
void add_tca_gpu_paths(Endpoint& endpoint, std::vector<Path>* paths);      // cuda.*
void add_nccl_paths(Endpoint& endpoint, std::vector<Path>* paths);         // ref.nccl_sendrecv
std::vector<Path> all_paths(Endpoint& endpoint);

// The GPU buffers of the endpoint, where every rank has a GPU (tca_gpu.cc; none without CUDA).
void allocate_gpu_buffers(Endpoint* endpoint, size_t bytes);

// Where MPI runs for ref.mpi_sendrecv: the job's world, set up by main() (mpi.cc).
void start_mpi_reference(Endpoint& endpoint);
void finish_mpi_reference();

}  // namespace tca_pingpong
