// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong's GPU paths (CUDA builds): host-kicked chains on the CUDA paths, GPU-initiated
// puts (with a signal, and inline messages) whose timed round trips run wholly on the GPUs, and
// ref.cuda_memcpy_peer.
#include <cuda_runtime_api.h>
#include <tca/tca_cuda.h>

#include <utility>
#include <vector>

#include "device_pingpong.h"
#include "pingpong.h"
#include "tca_harness/check.h"
#include "tca_harness/cuda_check.h"
#include "tca_harness/ranks.h"
#include "tca_harness/timer.h"

namespace tca_pingpong {
namespace {

using tca_harness::bench_stream;
using tca_harness::check;
using tca_harness::die;

// GPU-initiated (tca/tca_device.cuh): a kernel puts the message into the peer's GPU memory with
// a signal, the peer's kernel waits for the signal. Timed round trips run wholly on the GPUs:
// one kernel per rank bounces the message `iterations` times, timed by the initiator's GPU clock
// from the end of the first round trip (run_self_timed). Signal values only grow, so both
// ranks count the messages each way (shared by the channels of every size).
struct SignalSequence {
  uint64_t sent = 0;
  uint64_t received = 0;
};
constexpr int kSignalCell = 0;

// Two cells of GPU memory for a self-timed ping-pong's clock readings (PingPong::clock).
class GpuClock {
 public:
  GpuClock() {
    void* cells = nullptr;
    check(cudaMalloc(&cells, 2 * sizeof(unsigned long long)), "cudaMalloc");
    cells_ = static_cast<unsigned long long*>(cells);
  }
  ~GpuClock() { cudaFree(cells_); }
  GpuClock(const GpuClock&) = delete;
  GpuClock& operator=(const GpuClock&) = delete;
  unsigned long long* cells() const { return cells_; }

 private:
  unsigned long long* cells_ = nullptr;
};

// Runs `pingpong` (rounds set) as one kernel on this rank and returns the seconds per message.
// The initiator times the rounds after the first by the GPU's clock, so that neither the
// kernels' launch nor the wait for the peer's kernel to start is counted as messages' time; the
// responder (whose figure is not reported) and a single round use the host's clock around the
// kernel.
double run_self_timed(tca_tools::PingPong pingpong, const GpuClock& clock) {
  pingpong.clock = pingpong.rounds >= 2 ? clock.cells() : nullptr;
  const tca_harness::Timer timer;
  check(tca_tools::launch_device_pingpong(pingpong, bench_stream()), "launch_device_pingpong");
  check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
  const double host_seconds = timer.seconds();
  if (pingpong.clock == nullptr || !pingpong.initiator)
    return host_seconds / (2.0 * pingpong.rounds);
  unsigned long long stamps[2] = {};
  // In the benchmark's own stream: the legacy default stream would also wait for tca's.
  check(
      cudaMemcpyAsync(stamps, clock.cells(), sizeof stamps, cudaMemcpyDeviceToHost, bench_stream()),
      "cudaMemcpyAsync");
  check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
  if (stamps[1] < stamps[0]) die("device ping-pong: the GPU's clock went backwards");
  return static_cast<double>(stamps[1] - stamps[0]) * 1e-9 / (2.0 * (pingpong.rounds - 1));
}

// The group that puts: one thread, a warp, or a block (tcaDevicePutSignal / ...Warp / ...Block);
// kAutoForm picks the thread form up to 64 B and a block of 256 threads above.
constexpr unsigned kAutoForm = 0;
constexpr unsigned kThreadForm = 1;
constexpr unsigned kWarpForm = 32;
constexpr unsigned kBlockForm = 1024;  // the block of NVSHMEM's perftest, for comparison

class DevicePutSignalChannel final : public Channel {
 public:
  DevicePutSignalChannel(const tcaHandle& peer_recv, const unsigned char* my_send, size_t bytes,
                         int rank, int peer, SignalSequence* sequence, unsigned form)
      : my_send_(my_send), bytes_(bytes), sequence_(sequence), form_(form) {
    check(tcaDevicePointer(&peer_recv_, &peer_recv, 0, bytes), "tcaDevicePointer");
    check(tcaDeviceSignal(&peer_signal_, peer, kSignalCell), "tcaDeviceSignal");
    check(tcaDeviceSignal(&own_signal_, rank, kSignalCell), "tcaDeviceSignal");
  }
  void send() override {
    check(tca_tools::launch_device_put_signal(peer_recv_, my_send_, bytes_, peer_signal_,
                                              ++sequence_->sent, threads(), bench_stream()),
          "launch_device_put_signal");
    check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
  }
  void wait_for_peer() override {
    check(tca_tools::launch_device_signal_wait(own_signal_, ++sequence_->received, bench_stream()),
          "launch_device_signal_wait");
    check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
  }
  double self_timed(int rank, int iterations) override {
    if (sequence_->sent != sequence_->received) die("device put with signal: sequences diverged");
    tca_tools::PingPong pingpong{};
    pingpong.remote_dst = peer_recv_;
    pingpong.local_src = my_send_;
    pingpong.bytes = bytes_;
    pingpong.remote_signal = peer_signal_;
    pingpong.own_signal = own_signal_;
    pingpong.first_value = sequence_->sent;
    pingpong.rounds = iterations;
    pingpong.threads = threads();
    pingpong.initiator = rank == 0;
    const double seconds = run_self_timed(pingpong, clock_);
    sequence_->sent += iterations;
    sequence_->received += iterations;
    return seconds;
  }

 private:
  // The checked message goes by the same form as the timed ones.
  unsigned threads() const { return form_ != kAutoForm ? form_ : bytes_ <= 64 ? 1 : 256; }

  void* peer_recv_ = nullptr;
  const unsigned char* my_send_;
  size_t bytes_;
  uint64_t* peer_signal_ = nullptr;
  uint64_t* own_signal_ = nullptr;
  SignalSequence* sequence_;
  unsigned form_;
  GpuClock clock_;
};

// GPU-initiated inline messages (tcaDeviceInlinePut / tcaDeviceInlineWait): every 8-byte
// store carries 4 bytes of the message and its flag, into a mailbox in the peer's GPU memory;
// the peer's wait writes the message to its receive buffer. One mailbox per size, zeroed, and
// flags 1, 2, 3, ... in each direction; timed round trips run wholly on the GPUs.
constexpr size_t kInlineMaxBytes = size_t{64} << 10;  // a mailbox cell carries 4 bytes

class DeviceInlineChannel final : public Channel {
 public:
  DeviceInlineChannel(const unsigned char* my_send, unsigned char* my_recv, size_t bytes, int rank,
                      int peer)
      : my_send_(my_send), my_recv_(my_recv), bytes_(bytes), rank_(rank) {
    const size_t mailbox_bytes = tca_tools::inline_mailbox_bytes(bytes);
    void* mailbox = nullptr;
    check(tcaMalloc(&mailbox, mailbox_bytes, TCA_MEM_GPU), "tcaMalloc");
    own_mailbox_ = static_cast<uint64_t*>(mailbox);
    check(cudaMemset(mailbox, 0, mailbox_bytes), "cudaMemset");  // no flag before the first
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    tcaHandle mine{};
    check(tcaCreateHandle(&mine, mailbox, mailbox_bytes, TCA_MEM_GPU), "tcaCreateHandle");
    std::vector<tcaHandle> handles(2);
    check(tcaAllgatherHandles(&mine, handles.data()), "tcaAllgatherHandles");
    check(tcaDevicePointer(&peer_mailbox_, &handles[peer], 0, mailbox_bytes), "tcaDevicePointer");
  }
  // The peer no longer writes the mailbox: the driver's barrier follows the last round trip.
  ~DeviceInlineChannel() override { tcaFree(own_mailbox_); }

  void send() override {
    check(tca_tools::launch_device_inline_put(static_cast<uint64_t*>(peer_mailbox_), my_send_,
                                              bytes_, ++sent_, bench_stream()),
          "launch_device_inline_put");
    check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
  }
  void wait_for_peer() override {
    check(tca_tools::launch_device_inline_wait(own_mailbox_, my_recv_, bytes_, ++received_,
                                               bench_stream()),
          "launch_device_inline_wait");
    check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
  }
  double self_timed(int /*rank*/, int iterations) override {
    if (sent_ != received_) die("device inline put: flags diverged");
    tca_tools::PingPong pingpong{};
    pingpong.inline_message = true;
    pingpong.remote_dst = peer_mailbox_;
    pingpong.local_src = my_send_;
    pingpong.own_mailbox = own_mailbox_;
    pingpong.local_dst = my_recv_;
    pingpong.bytes = bytes_;
    pingpong.first_value = sent_;
    pingpong.rounds = iterations;
    // Up to two cells the thread form (one cell: 0.83 us against the warp form's 0.98 on an
    // H200 pair; two: 1.12 against 1.19, four: 1.42 against 1.19 on the x4 machine); up to a
    // warp's worth of cells, a lane each; then a block.
    pingpong.threads = bytes_ <= 8 ? 1 : bytes_ <= 128 ? 32 : bytes_ <= 4096 ? 256 : 1024;
    pingpong.initiator = rank_ == 0;
    const double seconds = run_self_timed(pingpong, clock_);
    sent_ += static_cast<uint32_t>(iterations);
    received_ += static_cast<uint32_t>(iterations);
    return seconds;
  }

 private:
  const unsigned char* my_send_;
  unsigned char* my_recv_;
  size_t bytes_;
  int rank_;
  uint64_t* own_mailbox_ = nullptr;
  void* peer_mailbox_ = nullptr;
  uint32_t sent_ = 0;      // the flag of the last message put into the peer's mailbox
  uint32_t received_ = 0;  // the flag of the last message taken from the own mailbox
  GpuClock clock_;
};

// Reference: the CUDA runtime's own copy into the peer's GPU memory (cudaMemcpyAsync through
// the peer mapping, what cudaMemcpyPeerAsync does), synchronized, then a notification.
class CudaMemcpyChannel final : public Channel {
 public:
  CudaMemcpyChannel(const tcaHandle& peer_recv, const unsigned char* my_send, size_t bytes,
                    int peer)
      : my_send_(my_send), bytes_(bytes), peer_(peer) {
    check(tcaDevicePointer(&peer_recv_, &peer_recv, 0, bytes), "tcaDevicePointer");
  }
  void send() override {
    check(cudaMemcpyAsync(peer_recv_, my_send_, bytes_, cudaMemcpyDefault, bench_stream()),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
    check(tcaNotify(peer_, kSlot), "tcaNotify");
  }
  void wait_for_peer() override { wait_for_notification(peer_); }

 private:
  void* peer_recv_ = nullptr;
  const unsigned char* my_send_;
  size_t bytes_;
  int peer_;
};

}  // namespace

// Host-kicked chains on the three CUDA paths in the memory combinations GPU->GPU, CPU->GPU and
// GPU->CPU, and tcaPut in the same combinations; GPU-initiated put with signal and inline;
// cudaMemcpyAsync for comparison.
void add_tca_gpu_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  const auto needs_gpu = [e](tcaPath path) {
    return [e, path] {
      return e->gpu ? needs_tca_path(path, e)() : std::string("no GPU on both ranks");
    };
  };
  const std::pair<const char*, tcaPath> chains[] = {{"cuda.ce", TCA_PATH_CUDA_CE},
                                                    {"cuda.sm", TCA_PATH_CUDA_SM},
                                                    {"cuda.resident", TCA_PATH_CUDA_RESIDENT},
                                                    {"cuda.auto", TCA_PATH_CUDA}};
  const std::pair<tcaMemKind, tcaMemKind> kinds[] = {
      {TCA_MEM_GPU, TCA_MEM_GPU}, {TCA_MEM_CPU, TCA_MEM_GPU}, {TCA_MEM_GPU, TCA_MEM_CPU}};
  for (const auto& [name, path] : chains) {
    for (const auto& [src, dst] : kinds) {
      paths->push_back({name, false, contiguous_layout, needs_gpu(path),
                        [e, path = path, src = src,
                         dst = dst](const Layout& layout) -> std::unique_ptr<Channel> {
                          return open_chain(path, layout, e->peer_recv_handle_of(dst),
                                            e->send_handle_of(src), e->peer);
                        },
                        src, dst});
    }
  }
  for (const auto& [src, dst] : kinds) {  // tcaPut as the transports choose, each message
    paths->push_back({"tca.put", false, contiguous_layout,
                      [e] { return e->gpu ? std::string() : std::string("no GPU on both ranks"); },
                      [e, src = src, dst = dst](const Layout& layout) -> std::unique_ptr<Channel> {
                        return open_put(e->peer_recv_handle_of(dst), e->send_of(src),
                                        layout.bytes(), e->peer);
                      },
                      src, dst});
  }
  Path pageable{"tca.put_pageable",
                false,
                contiguous_layout,
                [e] { return e->gpu ? std::string() : std::string("no GPU on both ranks"); },
                [e](const Layout& layout) -> std::unique_ptr<Channel> {
                  return open_put(e->peer_gpu_recv_handle, e->pageable_send.get(), layout.bytes(),
                                  e->peer);
                },
                TCA_MEM_CPU,
                TCA_MEM_GPU};
  pageable.pageable_source = true;
  paths->push_back(std::move(pageable));
  auto sequence = std::make_shared<SignalSequence>();
  const std::pair<const char*, unsigned> forms[] = {{"cuda.device_put_signal", kAutoForm},
                                                    {"cuda.device_put_signal_thread", kThreadForm},
                                                    {"cuda.device_put_signal_warp", kWarpForm},
                                                    {"cuda.device_put_signal_block", kBlockForm}};
  for (const auto& [name, form] : forms) {
    paths->push_back({name, false, contiguous_layout, needs_gpu(TCA_PATH_CUDA),
                      [e, sequence, form = form](const Layout& layout) -> std::unique_ptr<Channel> {
                        return std::make_unique<DevicePutSignalChannel>(
                            e->peer_gpu_recv_handle, e->gpu_send, layout.bytes(), e->rank, e->peer,
                            sequence.get(), form);
                      },
                      TCA_MEM_GPU, TCA_MEM_GPU});
  }
  paths->push_back({"cuda.device_put_inline", false, contiguous_layout, needs_gpu(TCA_PATH_CUDA),
                    [e](const Layout& layout) -> std::unique_ptr<Channel> {
                      return std::make_unique<DeviceInlineChannel>(
                          e->gpu_send, e->gpu_recv, layout.bytes(), e->rank, e->peer);
                    },
                    TCA_MEM_GPU, TCA_MEM_GPU, kInlineMaxBytes});
  paths->push_back({"ref.cuda_memcpy_peer", false, contiguous_layout, needs_gpu(TCA_PATH_CUDA),
                    [e](const Layout& layout) -> std::unique_ptr<Channel> {
                      return std::make_unique<CudaMemcpyChannel>(
                          e->peer_gpu_recv_handle, e->gpu_send, layout.bytes(), e->peer);
                    },
                    TCA_MEM_GPU, TCA_MEM_GPU});
}

void allocate_gpu_buffers(Endpoint* endpoint, size_t bytes) {
  void* send = nullptr;
  void* recv = nullptr;
  std::vector<tcaHandle> recv_handles(2);
  int device = -1;
  const bool has_gpu = tcaCudaDevice(&device) == TCA_SUCCESS;
  endpoint->gpu = tca_harness::all_ranks(has_gpu);
  if (!endpoint->gpu) return;
  check(tcaMalloc(&send, bytes, TCA_MEM_GPU), "tcaMalloc");
  check(tcaMalloc(&recv, bytes, TCA_MEM_GPU), "tcaMalloc");
  check(tcaCreateHandle(&endpoint->gpu_send_handle, send, bytes, TCA_MEM_GPU), "tcaCreateHandle");
  check(tcaCreateHandle(&endpoint->gpu_recv_handle, recv, bytes, TCA_MEM_GPU), "tcaCreateHandle");
  check(tcaAllgatherHandles(&endpoint->gpu_recv_handle, recv_handles.data()),
        "tcaAllgatherHandles");
  endpoint->peer_gpu_recv_handle = recv_handles[endpoint->peer];
  endpoint->gpu_send = static_cast<unsigned char*>(send);
  endpoint->gpu_recv = static_cast<unsigned char*>(recv);
}

}  // namespace tca_pingpong
