// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong: half-round-trip latency and bandwidth between two ranks, for every tca path
// that connects them, next to MPI_Send/MPI_Recv and a local memcpy for reference.
//
// Every path runs the same ping-pong driver (Channel below): rank 0 sends and waits for the
// answer, rank 1 waits and answers. Latency is half a round trip, bandwidth is bytes/latency.
// Built with the CUDA transport, the GPU paths join (cuda.*, with "src"/"dst" memory kinds),
// with cudaMemcpyAsync into the peer's GPU and NCCL send/recv as references in the same run.
// Before timing a size, one seeded message goes each way into poisoned memory and every byte
// is checked, so a path that moves nothing (or the wrong bytes) cannot report a fast number.
//
// Control between the two ranks (barriers, agreement, handles) runs through tca's bootstrap, so
// the program needs no MPI. ref.mpi_sendrecv is built where MPI is (TCA_BENCH_MPI) and runs where
// an MPI launcher started the job; elsewhere it is skipped with a note saying why.
#ifdef TCA_BENCH_MPI
#include <mpi.h>
#endif
#include <tca/tca.h>

#include "tca_harness/check.h"
#include "tca_harness/launch.h"
#include "tca_harness/options.h"
#include "tca_harness/ranks.h"
#include "tca_harness/report.h"
#include "tca_harness/sizes.h"
#include "tca_harness/stats.h"
#include "tca_harness/table.h"
#include "tca_harness/timer.h"

#ifdef TCA_HARNESS_CUDA
#include <cuda_runtime_api.h>
#include <tca/tca_cuda.h>

#include "device_pingpong.h"
#include "tca_harness/cuda_check.h"
#ifdef TCA_HARNESS_NCCL
#include "tca_harness/nccl.h"
#endif
#endif
#ifdef TCA_BENCH_UCX
#include "ucx_reference.h"
#endif

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace {

constexpr int kChannel = 0;           // DMA channel of every descriptor
constexpr int kSlot = 0;              // notification slot; ping-pong never has two in flight
constexpr size_t kBlockBytes = 4096;  // widest block of the *.chain2d paths
constexpr unsigned char kPoison = 0xA5;
// Default iterations per batch: about this many bytes each way, within [min, max].
constexpr size_t kBytesPerBatch = size_t{32} << 20;
constexpr int kMinIterations = 4;
constexpr int kMaxIterations = 1000;

// Failures print "tca-pingpong: rank R: ..." and end the job (the peer may be blocked in a wait).
using tca_harness::check;
using tca_harness::describe_failure;
using tca_harness::die;

int g_rank = 0;

// ---- where a message lies, and how to fill and check it ----

// `count` blocks of `width` bytes, `pitch` bytes apart, from offset 0 of a buffer.
struct Layout {
  size_t width;
  size_t pitch;
  size_t count;
  bool strided;  // sent as one block-stride (2D) transfer
  size_t bytes() const { return width * count; }
  size_t extent() const { return (count - 1) * pitch + width; }
};

Layout contiguous_layout(size_t bytes) { return {bytes, bytes, 1, false}; }

// Blocks of min(bytes, 4 KiB) — for sizes that are no multiple of 4 KiB, the largest power of
// two dividing them — one block-width apart, so the gaps must come through untouched.
Layout strided_layout(size_t bytes) {
  const size_t width = bytes < kBlockBytes ? bytes : std::gcd(bytes, kBlockBytes);
  return {width, 2 * width, bytes / width, true};
}

uint8_t pattern_byte(uint64_t seed, size_t offset) {
  uint64_t x = seed + offset * 0x9E3779B97F4A7C15ull;  // splitmix64
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint8_t>(x ^ (x >> 31));
}

void fill_pattern(unsigned char* buffer, const Layout& layout, uint64_t seed) {
  for (size_t block = 0; block < layout.count; ++block) {
    const size_t begin = block * layout.pitch;
    for (size_t offset = begin; offset < begin + layout.width; ++offset)
      buffer[offset] = pattern_byte(seed, offset);
  }
}

// Describes the first wrong byte (blocks must hold the pattern, gaps the poison), or "".
std::string find_corruption(const unsigned char* buffer, const Layout& layout, uint64_t seed) {
  auto mismatch = [&](size_t offset, unsigned expected) {
    char text[128];
    std::snprintf(text, sizeof text, "byte %zu is 0x%02x, expected 0x%02x%s", offset,
                  unsigned{buffer[offset]}, expected,
                  expected == kPoison ? " (a gap between blocks was written)" : "");
    return std::string(text);
  };
  for (size_t block = 0; block < layout.count; ++block) {
    const size_t begin = block * layout.pitch;
    for (size_t offset = begin; offset < begin + layout.width; ++offset)
      if (buffer[offset] != pattern_byte(seed, offset))
        return mismatch(offset, pattern_byte(seed, offset));
    const size_t gap_end = block + 1 < layout.count ? begin + layout.pitch : begin + layout.width;
    for (size_t offset = begin + layout.width; offset < gap_end; ++offset)
      if (buffer[offset] != kPoison) return mismatch(offset, kPoison);
  }
  return "";
}

// ---- message buffers of either memory kind, seen from the host ----

void fill_message(tcaMemKind kind, unsigned char* buffer, const Layout& layout, uint64_t seed) {
#ifdef TCA_HARNESS_CUDA
  if (kind == TCA_MEM_GPU) {
    std::vector<unsigned char> staged(layout.extent());
    fill_pattern(staged.data(), layout, seed);
    check(cudaMemcpy(buffer, staged.data(), staged.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
    // From pageable memory the copy may still be landing: no message may leave before it has.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return;
  }
#endif
  (void)kind;
  fill_pattern(buffer, layout, seed);
}

void poison_message(tcaMemKind kind, unsigned char* buffer, const Layout& layout) {
#ifdef TCA_HARNESS_CUDA
  if (kind == TCA_MEM_GPU) {
    check(cudaMemset(buffer, kPoison, layout.extent()), "cudaMemset");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // poisoned before the barrier
    return;
  }
#endif
  (void)kind;
  std::memset(buffer, kPoison, layout.extent());
}

std::string check_message(tcaMemKind kind, const unsigned char* buffer, const Layout& layout,
                          uint64_t seed) {
#ifdef TCA_HARNESS_CUDA
  if (kind == TCA_MEM_GPU) {
    std::vector<unsigned char> landed(layout.extent());
    check(cudaMemcpy(landed.data(), buffer, landed.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return find_corruption(landed.data(), layout, seed);
  }
#endif
  (void)kind;
  return find_corruption(buffer, layout, seed);
}

// ---- the channels: one way each of moving a message to the peer ----

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

void wait_for_notification(int peer) {
  check(tcaWaitDMARecvDesc(peer, kSlot, nullptr), "tcaWaitDMARecvDesc");
}

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

#ifdef TCA_BENCH_MPI
constexpr int kTag = 7;  // tag of the MPI reference messages

// Reference: two-sided MPI with the same buffers.
class MpiSendRecvChannel final : public Channel {
 public:
  MpiSendRecvChannel(unsigned char* my_send, unsigned char* my_recv, size_t bytes, int peer,
                     MPI_Comm comm)
      : my_send_(my_send),
        my_recv_(my_recv),
        count_(static_cast<int>(bytes)),
        peer_(peer),
        comm_(comm) {}

  void send() override { MPI_Send(my_send_, count_, MPI_BYTE, peer_, kTag, comm_); }
  void wait_for_peer() override {
    MPI_Recv(my_recv_, count_, MPI_BYTE, peer_, kTag, comm_, MPI_STATUS_IGNORE);
  }

 private:
  unsigned char* my_send_;
  unsigned char* my_recv_;
  int count_;
  int peer_;
  MPI_Comm comm_;
};
#endif  // TCA_BENCH_MPI

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

#ifdef TCA_HARNESS_CUDA
// The benchmark's stream on this rank's GPU (made once tcaInit has chosen the device).
cudaStream_t gpu_stream() {
  static const cudaStream_t stream = [] {
    cudaStream_t created = nullptr;
    check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreate");
    return created;
  }();
  return stream;
}

// GPU-initiated (tca/tca_device.cuh): a kernel puts the message into the peer's GPU memory with
// a signal, the peer's kernel waits for the signal. Timed round trips run wholly on the GPUs:
// one kernel per rank bounces the message `iterations` times. Signal values only grow, so both
// ranks count the messages each way (shared by the channels of every size).
struct SignalSequence {
  uint64_t sent = 0;
  uint64_t received = 0;
};
constexpr int kSignalCell = 0;

class DevicePutSignalChannel final : public Channel {
 public:
  DevicePutSignalChannel(const tcaHandle& peer_recv, const unsigned char* my_send, size_t bytes,
                         int rank, int peer, SignalSequence* sequence)
      : my_send_(my_send), bytes_(bytes), sequence_(sequence) {
    check(tcaDevicePointer(&peer_recv_, &peer_recv, 0, bytes), "tcaDevicePointer");
    check(tcaDeviceSignal(&peer_signal_, peer, kSignalCell), "tcaDeviceSignal");
    check(tcaDeviceSignal(&own_signal_, rank, kSignalCell), "tcaDeviceSignal");
  }
  void send() override {
    check(tca_tools::launch_device_put_signal(peer_recv_, my_send_, bytes_, peer_signal_,
                                              ++sequence_->sent, gpu_stream()),
          "launch_device_put_signal");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
  }
  void wait_for_peer() override {
    check(tca_tools::launch_device_signal_wait(own_signal_, ++sequence_->received, gpu_stream()),
          "launch_device_signal_wait");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
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
    pingpong.threads = bytes_ <= 64 ? 1 : 256;  // small messages: the thread form
    pingpong.initiator = rank == 0;
    const tca_harness::Timer timer;
    check(tca_tools::launch_device_pingpong(pingpong, gpu_stream()), "launch_device_pingpong");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
    const double elapsed = timer.seconds();
    sequence_->sent += iterations;
    sequence_->received += iterations;
    return elapsed / (2.0 * iterations);
  }

 private:
  void* peer_recv_ = nullptr;
  const unsigned char* my_send_;
  size_t bytes_;
  uint64_t* peer_signal_ = nullptr;
  uint64_t* own_signal_ = nullptr;
  SignalSequence* sequence_;
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
                                              bytes_, ++sent_, gpu_stream()),
          "launch_device_inline_put");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
  }
  void wait_for_peer() override {
    check(tca_tools::launch_device_inline_wait(own_mailbox_, my_recv_, bytes_, ++received_,
                                               gpu_stream()),
          "launch_device_inline_wait");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
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
    const tca_harness::Timer timer;
    check(tca_tools::launch_device_pingpong(pingpong, gpu_stream()), "launch_device_pingpong");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
    const double elapsed = timer.seconds();
    sent_ += static_cast<uint32_t>(iterations);
    received_ += static_cast<uint32_t>(iterations);
    return elapsed / (2.0 * iterations);
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
    check(cudaMemcpyAsync(peer_recv_, my_send_, bytes_, cudaMemcpyDefault, gpu_stream()),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
    check(tcaNotify(peer_, kSlot), "tcaNotify");
  }
  void wait_for_peer() override { wait_for_notification(peer_); }

 private:
  void* peer_recv_ = nullptr;
  const unsigned char* my_send_;
  size_t bytes_;
  int peer_;
};

#ifdef TCA_HARNESS_NCCL
// Reference: NCCL send/recv, loaded at run time (libnccl.so.2 may be absent, or refuse two
// ranks on one GPU; then the row is skipped with a note). One communicator serves every size.
class NcclChannel final : public Channel {
 public:
  NcclChannel(const tca_harness::Nccl& nccl, const unsigned char* my_send, unsigned char* my_recv,
              size_t bytes, int peer)
      : nccl_(nccl), my_send_(my_send), my_recv_(my_recv), bytes_(bytes), peer_(peer) {}
  void send() override {
    nccl_.check(nccl_.send(my_send_, bytes_, ncclUint8, peer_, gpu_stream()), "ncclSend");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
  }
  void wait_for_peer() override {
    nccl_.check(nccl_.recv(my_recv_, bytes_, ncclUint8, peer_, gpu_stream()), "ncclRecv");
    check(cudaStreamSynchronize(gpu_stream()), "cudaStreamSynchronize");
  }

 private:
  const tca_harness::Nccl& nccl_;
  const unsigned char* my_send_;
  unsigned char* my_recv_;
  size_t bytes_;
  int peer_;
};
#endif  // TCA_HARNESS_NCCL
#endif  // TCA_HARNESS_CUDA

// ---- the shared driver ----

struct Endpoint {
  int rank = 0;
  int peer = 1;
#ifdef TCA_BENCH_MPI
  MPI_Comm comm = MPI_COMM_NULL;  // ref.mpi_sendrecv's own traffic, where MPI runs
#endif
  std::string mpi_missing;  // why ref.mpi_sendrecv cannot run, or ""
  size_t buffer_bytes = 0;
  unsigned char* send = nullptr;
  unsigned char* recv = nullptr;
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

// One message each way (just rank 0's copy for a local path) into poisoned memory. Collective;
// returns what this rank found wrong, or "".
std::string verify_once(Channel& channel, bool local, tcaMemKind src, tcaMemKind dst,
                        const Layout& layout, const Endpoint& endpoint, uint64_t seed) {
  std::string problem;
  const int directions = local ? 1 : 2;
  for (int sender = 0; sender < directions; ++sender) {
    const int receiver = local ? sender : 1 - sender;
    const uint64_t message_seed = seed * 2 + static_cast<uint64_t>(sender);
    if (endpoint.rank == sender) fill_message(src, endpoint.send_of(src), layout, message_seed);
    if (endpoint.rank == receiver) poison_message(dst, endpoint.recv_of(dst), layout);
    tca_harness::barrier();  // poisoned before anything can arrive
    if (endpoint.rank == sender) channel.send();
    if (endpoint.rank == receiver) {
      if (!local) channel.wait_for_peer();
      const std::string corruption =
          check_message(dst, endpoint.recv_of(dst), layout, message_seed);
      if (!corruption.empty())
        problem = "message from rank " + std::to_string(sender) + ": " + corruption;
    }
  }
  return problem;
}

// Seconds per message, from `iterations` steps (a step is a round trip of two messages, or
// one copy on a local path).
double time_batch(Channel& channel, bool local, int rank, int iterations) {
  if (const double seconds = channel.self_timed(rank, iterations); seconds >= 0) return seconds;
  const tca_harness::Timer timer;
  for (int i = 0; i < iterations; ++i) {
    if (local) {
      if (rank == 0) channel.send();
    } else if (rank == 0) {
      channel.send();
      channel.wait_for_peer();
    } else {
      channel.wait_for_peer();
      channel.send();
    }
  }
  return timer.seconds() / (iterations * (local ? 1.0 : 2.0));
}

// The median resists a few disturbed batches; the minimum, what the path can do undisturbed.
double summarize(const std::vector<double>& values, const std::string& statistic) {
  return statistic == "min" ? tca_harness::minimum(values) : tca_harness::median(values);
}

// ---- paths, options, output ----

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
};

const char* kind_name(tcaMemKind kind) { return kind == TCA_MEM_GPU ? "gpu" : "cpu"; }

std::function<std::string()> needs_tca_path(tcaPath path, const Endpoint* endpoint) {
  return [path, endpoint] {
    int available = 0;
    check(tcaPathAvailable(path, endpoint->peer, &available), "tcaPathAvailable");
    return available ? std::string() : std::string("tcaPathAvailable says no");
  };
}

#ifdef TCA_HARNESS_CUDA
// Host-kicked chains on the three CUDA paths in the memory combinations GPU->GPU, CPU->GPU and
// GPU->CPU; GPU-initiated put with signal; cudaMemcpyAsync and NCCL for comparison.
void add_gpu_paths(Endpoint& endpoint, std::vector<Path>* paths) {
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
                          return std::make_unique<ChainChannel>(path, layout,
                                                                e->peer_recv_handle_of(dst),
                                                                e->send_handle_of(src), e->peer);
                        },
                        src, dst});
    }
  }
  auto sequence = std::make_shared<SignalSequence>();
  paths->push_back({"cuda.device_put_signal", false, contiguous_layout, needs_gpu(TCA_PATH_CUDA),
                    [e, sequence](const Layout& layout) -> std::unique_ptr<Channel> {
                      return std::make_unique<DevicePutSignalChannel>(
                          e->peer_gpu_recv_handle, e->gpu_send, layout.bytes(), e->rank, e->peer,
                          sequence.get());
                    },
                    TCA_MEM_GPU, TCA_MEM_GPU});
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
#ifdef TCA_HARNESS_NCCL
  auto nccl = std::make_shared<tca_harness::Nccl>();
  paths->push_back({"ref.nccl_sendrecv", false, contiguous_layout,
                    [e, nccl] {  // collective: both ranks ask every path
                      return e->gpu ? nccl->open() : std::string("no GPU on both ranks");
                    },
                    [e, nccl](const Layout& layout) -> std::unique_ptr<Channel> {
                      return std::make_unique<NcclChannel>(*nccl, e->gpu_send, e->gpu_recv,
                                                           layout.bytes(), e->peer);
                    },
                    TCA_MEM_GPU, TCA_MEM_GPU});
#endif
}
#endif

// ucx.chain: the chain on TCA_PATH_UCX for cpu>cpu and, where both ranks have a GPU, gpu>gpu,
// cpu>gpu and gpu>cpu; ucx.chain2d: the block-stride form (one put per block).
void add_ucx_chain_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  const std::pair<tcaMemKind, tcaMemKind> kinds[] = {{TCA_MEM_CPU, TCA_MEM_CPU},
                                                     {TCA_MEM_GPU, TCA_MEM_GPU},
                                                     {TCA_MEM_CPU, TCA_MEM_GPU},
                                                     {TCA_MEM_GPU, TCA_MEM_CPU}};
  for (const auto& [src, dst] : kinds) {
    const bool needs_gpu = src == TCA_MEM_GPU || dst == TCA_MEM_GPU;
    paths->push_back({"ucx.chain", false, contiguous_layout,
                      [e, needs_gpu] {
                        if (needs_gpu && !e->gpu) return std::string("no GPU on both ranks");
                        return needs_tca_path(TCA_PATH_UCX, e)();
                      },
                      [e, src = src, dst = dst](const Layout& layout) -> std::unique_ptr<Channel> {
                        return std::make_unique<ChainChannel>(TCA_PATH_UCX, layout,
                                                              e->peer_recv_handle_of(dst),
                                                              e->send_handle_of(src), e->peer);
                      },
                      src, dst});
  }
  paths->push_back({"ucx.chain2d", false, strided_layout, needs_tca_path(TCA_PATH_UCX, e),
                    [e](const Layout& layout) -> std::unique_ptr<Channel> {
                      return std::make_unique<ChainChannel>(
                          TCA_PATH_UCX, layout, e->peer_recv_handle, e->send_handle, e->peer);
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
    paths->push_back(
        {"auto.chain", false, contiguous_layout,
         [e, needs_gpu] {
           return needs_gpu && !e->gpu ? std::string("no GPU on both ranks") : std::string();
         },
         [e, src = src, dst = dst](const Layout& layout) -> std::unique_ptr<Channel> {
           return std::make_unique<ChainChannel>(TCA_PATH_AUTO, layout, e->peer_recv_handle_of(dst),
                                                 e->send_handle_of(src), e->peer);
         },
         src, dst});
  }
}

#ifdef TCA_BENCH_UCX
// Reference: UCX's own put + flush, then a flag put (bench/ucx_reference.h).
class UcxPutChannel final : public Channel {
 public:
  UcxPutChannel(tca_bench::UcxReference& ucx, size_t from, size_t to, size_t bytes)
      : ucx_(ucx), from_(from), to_(to), bytes_(bytes) {}
  void send() override { ucx_.send(from_, to_, bytes_); }
  void wait_for_peer() override { ucx_.wait_for_peer(); }

 private:
  tca_bench::UcxReference& ucx_;
  size_t from_;
  size_t to_;
  size_t bytes_;
};

// ref.ucx_put for cpu>cpu and, where both ranks have a GPU, gpu>gpu, cpu>gpu and gpu>cpu. The
// buffers are the chains' own: 0 and 1 the host send and receive buffers, 2 and 3 the GPU's.
void add_ucx_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  auto ucx = std::make_shared<tca_bench::UcxReference>();
  const auto index = [](tcaMemKind kind, bool receive) -> size_t {
    return (kind == TCA_MEM_GPU ? 2 : 0) + (receive ? 1 : 0);
  };
  const std::pair<tcaMemKind, tcaMemKind> kinds[] = {{TCA_MEM_CPU, TCA_MEM_CPU},
                                                     {TCA_MEM_GPU, TCA_MEM_GPU},
                                                     {TCA_MEM_CPU, TCA_MEM_GPU},
                                                     {TCA_MEM_GPU, TCA_MEM_CPU}};
  for (const auto& [src, dst] : kinds) {
    const bool needs_gpu = src == TCA_MEM_GPU || dst == TCA_MEM_GPU;
    paths->push_back({"ref.ucx_put", false, contiguous_layout,
                      [e, ucx, needs_gpu] {  // collective: both ranks ask every path
                        if (needs_gpu && !e->gpu) return std::string("no GPU on both ranks");
                        std::vector<tca_bench::UcxBuffer> buffers = {
                            {e->send, e->buffer_bytes, false}, {e->recv, e->buffer_bytes, false}};
                        if (e->gpu) {
                          buffers.push_back({e->gpu_send, e->buffer_bytes, true});
                          buffers.push_back({e->gpu_recv, e->buffer_bytes, true});
                        }
                        return ucx->open(e->peer, buffers);
                      },
                      [ucx, from = index(src, false),
                       to = index(dst, true)](const Layout& layout) -> std::unique_ptr<Channel> {
                        return std::make_unique<UcxPutChannel>(*ucx, from, to, layout.bytes());
                      },
                      src, dst});
  }
}
#endif

std::vector<Path> all_paths(Endpoint& endpoint) {
  const Endpoint* e = &endpoint;
  auto chain = [e](tcaPath path) {
    return [e, path](const Layout& layout) -> std::unique_ptr<Channel> {
      return std::make_unique<ChainChannel>(path, layout, e->peer_recv_handle, e->send_handle,
                                            e->peer);
    };
  };
  auto pio_window = std::make_shared<void*>(nullptr);  // set once the path is known to work
  std::vector<Path> paths;
  paths.push_back({"shm.chain", false, contiguous_layout, needs_tca_path(TCA_PATH_SHM, e),
                   chain(TCA_PATH_SHM)});
  paths.push_back(
      {"shm.chain2d", false, strided_layout, needs_tca_path(TCA_PATH_SHM, e), chain(TCA_PATH_SHM)});
  paths.push_back(
      {"shm.pio", false, contiguous_layout,
       [e, pio_window] {
         const tcaResult result =
             tcaPIOPointer(pio_window.get(), &e->peer_recv_handle, 0, e->buffer_bytes);
         return result == TCA_SUCCESS ? std::string() : describe_failure(result, "tcaPIOPointer");
       },
       [e, pio_window](const Layout& layout) -> std::unique_ptr<Channel> {
         return std::make_unique<PioChannel>(*pio_window, e->send, layout.bytes(), e->peer);
       }});
  paths.push_back({"mpi.chain", false, contiguous_layout, needs_tca_path(TCA_PATH_MPI, e),
                   chain(TCA_PATH_MPI)});
  paths.push_back(
      {"mpi.chain2d", false, strided_layout, needs_tca_path(TCA_PATH_MPI, e), chain(TCA_PATH_MPI)});
  paths.push_back({"ref.mpi_sendrecv", false, contiguous_layout, [e] { return e->mpi_missing; },
                   [e](const Layout& layout) -> std::unique_ptr<Channel> {
#ifdef TCA_BENCH_MPI
                     return std::make_unique<MpiSendRecvChannel>(e->send, e->recv, layout.bytes(),
                                                                 e->peer, e->comm);
#else
                     (void)e;
                     (void)layout;
                     die("ref.mpi_sendrecv needs MPI");  // unreachable: mpi_missing says why
#endif
                   }});
  paths.push_back({"ref.memcpy", true, contiguous_layout, [] { return std::string(); },
                   [e](const Layout& layout) -> std::unique_ptr<Channel> {
                     return std::make_unique<LocalMemcpyChannel>(e->send, e->recv, layout.bytes());
                   }});
  add_ucx_chain_paths(endpoint, &paths);
  add_auto_chain_paths(endpoint, &paths);
#ifdef TCA_BENCH_UCX
  add_ucx_paths(endpoint, &paths);
#endif
#ifdef TCA_HARNESS_CUDA
  add_gpu_paths(endpoint, &paths);
#endif
  return paths;
}

struct Options {
  size_t min_bytes = 8;
  size_t max_bytes = size_t{64} << 20;
  size_t factor = 2;
  int iterations = 0;  // 0: scaled by size
  int warmup = -1;     // -1: a tenth of the iterations
  int repetitions = 5;
  std::string statistic = "median";  // over the repetitions: "median" or "min"
  std::vector<std::string> paths;    // empty: all
  bool json = false;
};

int iterations_for(const Options& options, size_t bytes) {
  if (options.iterations > 0) return options.iterations;
  const size_t scaled = kBytesPerBatch / bytes;
  return static_cast<int>(std::clamp<size_t>(scaled, kMinIterations, kMaxIterations));
}

int warmup_for(const Options& options, int iterations) {
  return options.warmup >= 0 ? options.warmup : std::max(1, iterations / 10);
}

std::vector<size_t> message_sizes(const Options& options) {
  return tca_harness::size_series(options.min_bytes, options.max_bytes, options.factor);
}

// The table (stdout, or stderr with --json) and the JSON report, written by rank 0.
struct Output {
  Output(const Options& options, int rank)
      : table(options.json, rank == 0), report("tca-pingpong", rank == 0) {
    table.set_columns({{"path", 24, tca_harness::Align::kLeft},
                       {"src>dst", 7, tca_harness::Align::kLeft},
                       {"size (bytes)", 14},
                       {"latency (us)", 14},
                       {"bandwidth (GB/s)", 18}});
    report.set("ranks", 2);
  }
  tca_harness::Table table;
  tca_harness::Report report;
};

void print_header(const Options& options, const Output& output, const char* auto_transport,
                  int peer) {
  using tca_harness::format;
  const tca_harness::Table& table = output.table;
  const char* bootstrap = "?";
  check(tcaBootstrapInfo(&bootstrap, nullptr), "tcaBootstrapInfo");
  table.comment(format("tca-pingpong %d.%d: 2 ranks, auto transport between them: %s, bootstrap %s",
                       TCA_VERSION_MAJOR, TCA_VERSION_MINOR, auto_transport, bootstrap));
  table.comment(
      format("latency: half a round trip (ref.memcpy: one copy in rank 0), %s of %d "
             "batches",
             options.statistic.c_str(), options.repetitions));
  if (options.iterations > 0)
    table.comment(format("iterations per batch: %d", options.iterations));
  else
    table.comment(format("iterations per batch: %zu MiB / size, within [%d, %d]",
                         kBytesPerBatch >> 20, kMinIterations, kMaxIterations));
  table.comment("bandwidth: size / latency, 1 GB/s = 1e9 bytes/s");
  table.comment(
      format("*.chain2d: blocks of min(size, %zu) bytes at a pitch of two blocks", kBlockBytes));
  table.comment("every size is verified once each way before it is timed");
  for (const tcaMemKind kind : {TCA_MEM_CPU, TCA_MEM_GPU}) {
    const char* name = nullptr;
    const char* sizes = nullptr;
    if (tcaAutoTransport(peer, kind, kind, 8, &name, &sizes) != TCA_SUCCESS) continue;
    const char* text = kind == TCA_MEM_GPU ? "gpu>gpu" : "cpu>cpu";
    table.comment(format("auto.chain %s: %s", text,
                         *sizes != 0 ? format("from bytes:transport %s", sizes).c_str()
                                     : format("%s at every size", name).c_str()));
  }
  table.header();
}

// "<path> <src>><dst>", as the comment lines name a path.
std::string path_label(const Path& path) {
  return path.name + " " + kind_name(path.src) + ">" + kind_name(path.dst);
}

// Both ranks run this for every path; only rank 0 reports rows. False if verification failed.
bool run_path(const Path& path, const Options& options, const Endpoint& endpoint, Output* output) {
  uint64_t seed = std::hash<std::string>{}(path.name);
  for (size_t bytes : message_sizes(options)) {
    if (bytes > path.max_bytes) {
      output->table.comment(tca_harness::format("%s: sizes over %zu bytes skipped",
                                                path_label(path).c_str(), path.max_bytes));
      break;
    }
    const Layout layout = path.layout(bytes);
    const std::unique_ptr<Channel> channel = path.open(layout);
    tca_harness::barrier();  // both descriptors are set before the first kick

    const std::string problem =
        verify_once(*channel, path.local, path.src, path.dst, layout, endpoint, ++seed);
    if (!problem.empty())
      std::fprintf(stderr, "tca-pingpong: rank %d: %s, %zu bytes: wrong data: %s\n", endpoint.rank,
                   path_label(path).c_str(), bytes, problem.c_str());
    if (!tca_harness::all_ranks(problem.empty())) {
      output->table.comment(path_label(path) + ": abandoned, it delivered wrong data");
      return false;
    }

    const int iterations = iterations_for(options, bytes);
    const int warmup = warmup_for(options, iterations);
    if (warmup > 0) time_batch(*channel, path.local, endpoint.rank, warmup);
    std::vector<double> seconds;
    for (int repetition = 0; repetition < options.repetitions; ++repetition)
      seconds.push_back(time_batch(*channel, path.local, endpoint.rank, iterations));
    tca_harness::barrier();  // the peer is done with the descriptor before it is freed

    if (endpoint.rank == 0) {
      const double latency = summarize(seconds, options.statistic);
      const double latency_us = latency * 1e6;
      const double bandwidth_GBps = static_cast<double>(bytes) / latency / 1e9;
      const std::string kinds = std::string(kind_name(path.src)) + ">" + kind_name(path.dst);
      output->table.row({path.name, kinds, bytes, latency_us, bandwidth_GBps});
      output->report.add_row({{"path", path.name},
                              {"src", kind_name(path.src)},
                              {"dst", kind_name(path.dst)},
                              {"bytes", bytes},
                              {"latency_us", latency_us},
                              {"bandwidth_GBps", bandwidth_GBps}});
    }
  }
  return true;
}

void allocate_buffers(Endpoint* endpoint, size_t bytes) {
  void* send = nullptr;
  void* recv = nullptr;
  check(tcaMalloc(&send, bytes, TCA_MEM_CPU), "tcaMalloc");
  check(tcaMalloc(&recv, bytes, TCA_MEM_CPU), "tcaMalloc");
  check(tcaCreateHandle(&endpoint->send_handle, send, bytes, TCA_MEM_CPU), "tcaCreateHandle");
  check(tcaCreateHandle(&endpoint->recv_handle, recv, bytes, TCA_MEM_CPU), "tcaCreateHandle");
  std::vector<tcaHandle> recv_handles(2);
  check(tcaAllgatherHandles(&endpoint->recv_handle, recv_handles.data()), "tcaAllgatherHandles");
  endpoint->peer_recv_handle = recv_handles[endpoint->peer];
  endpoint->send = static_cast<unsigned char*>(send);
  endpoint->recv = static_cast<unsigned char*>(recv);
  endpoint->buffer_bytes = bytes;
#ifdef TCA_HARNESS_CUDA
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
#endif
}

void free_buffers(Endpoint* endpoint) {
  tca_harness::barrier();  // the peer no longer writes into our buffers
  check(tcaDestroyHandle(&endpoint->send_handle), "tcaDestroyHandle");
  check(tcaDestroyHandle(&endpoint->recv_handle), "tcaDestroyHandle");
  check(tcaFree(endpoint->send), "tcaFree");
  check(tcaFree(endpoint->recv), "tcaFree");
  if (endpoint->gpu) {
    check(tcaFree(endpoint->gpu_send), "tcaFree");  // also deregisters their handles
    check(tcaFree(endpoint->gpu_recv), "tcaFree");
  }
}

// Room for the largest message in either layout.
size_t buffer_bytes_for(const Options& options) {
  size_t bytes = 0;
  for (size_t size : message_sizes(options))
    bytes = std::max({bytes, contiguous_layout(size).extent(), strided_layout(size).extent()});
  return bytes;
}

void add_options(tca_harness::Cli& cli, Options& options,
                 const std::vector<std::string>& path_names) {
  CLI::App& app = cli.app();
  cli.add_size("-b,--min-bytes", options.min_bytes, "Smallest message", 1, size_t{1} << 30);
  cli.add_size("-e,--max-bytes", options.max_bytes, "Largest message (at most 1 GiB)", 1,
               size_t{1} << 30);
  app.add_option("-f,--factor", options.factor, "Each size is the previous one times this")
      ->check(CLI::Range(size_t{2}, size_t{1024}))
      ->capture_default_str();
  app.add_option("-i,--iters", options.iterations,
                 "Round trips per timed batch (0: 32 MiB / size, within [4, 1000])")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-w,--warmup", options.warmup,
                 "Untimed round trips before each size (-1: a tenth of the iterations)")
      ->check(CLI::Range(-1, INT_MAX))
      ->capture_default_str();
  app.add_option("-r,--repetitions", options.repetitions, "Timed batches per size")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("-s,--statistic", options.statistic, "What is reported of the batches")
      ->check(CLI::IsMember({"median", "min"}))
      ->capture_default_str();
  cli.add_repeatable("-p,--path", options.paths, "Only these paths (repeatable; default all)",
                     path_names);
  cli.add_json(options.json);
}

bool selected(const Options& options, const Path& path) {
  return options.paths.empty() ||
         std::find(options.paths.begin(), options.paths.end(), path.name) != options.paths.end();
}

// Starts tca on exactly 2 ranks: the endpoint, its buffers and, where MPI runs (`mpi_missing` is
// ""), ref.mpi_sendrecv's communicator. False (after saying why) on another number of ranks.
bool start(const Options& options, const std::string& mpi_missing, const char* program,
           Endpoint* endpoint) {
  check(tcaInit(), "tcaInit");
  g_rank = tca_harness::job_rank();
  const int size = tca_harness::job_size();
  if (size != 2) {
    if (g_rank == 0)
      std::fprintf(stderr,
                   "tca-pingpong: needs exactly 2 ranks, got %d (run: tca-run -n 2 %s, or mpirun "
                   "-n 2 %s)\n",
                   size, program, program);
    check(tcaFinalize(), "tcaFinalize");
    return false;
  }
  endpoint->rank = g_rank;
  endpoint->peer = 1 - g_rank;
  endpoint->mpi_missing = mpi_missing;
#ifdef TCA_BENCH_MPI
  if (mpi_missing.empty()) MPI_Comm_dup(MPI_COMM_WORLD, &endpoint->comm);
#endif
  allocate_buffers(endpoint, buffer_bytes_for(options));
  return true;
}

void finish(Endpoint* endpoint) {
  free_buffers(endpoint);
#ifdef TCA_BENCH_MPI
  if (endpoint->comm != MPI_COMM_NULL) MPI_Comm_free(&endpoint->comm);
#endif
  check(tcaFinalize(), "tcaFinalize");
}

// Every selected path both ranks can run; false where one delivered wrong data.
bool run_paths(const Options& options, Endpoint& endpoint, Output* output) {
  bool all_verified = true;
  for (const Path& path : all_paths(endpoint)) {
    if (!selected(options, path)) continue;
    const std::string reason =
        tca_harness::agreed_reason(path.unavailable_reason(), "not available on rank 1");
    if (!reason.empty()) {
      tca_harness::skip_note(output->table, output->report,
                             path_label(path) + ": skipped, " + reason);
      continue;
    }
    all_verified = run_path(path, options, endpoint, output) && all_verified;
  }
  return all_verified;
}

}  // namespace

int main(int argc, char** argv) {
  // MPI only for ref.mpi_sendrecv, and only where an MPI launcher started the job (before
  // tcaInit, which then leaves MPI's lifetime to the program).
  const std::string mpi_missing = tca_harness::start_reference_mpi(&argc, &argv);
  tca_harness::set_program_name("tca-pingpong");

  Endpoint endpoint;
  std::vector<std::string> path_names;
  for (const Path& path : all_paths(endpoint)) path_names.push_back(path.name);

  tca_harness::Cli cli{
      "tca-pingpong: ping-pong latency and bandwidth of every tca path between "
      "two ranks (run: tca-run -n 2 tca-pingpong, or mpirun -n 2 tca-pingpong)"};
  Options options;
  add_options(cli, options, path_names);
  const std::optional<int> parse_end = cli.parse(argc, argv, tca_harness::launch_rank(), [&] {
    if (options.min_bytes > options.max_bytes)
      throw CLI::ValidationError("--min-bytes", "must not exceed --max-bytes");
  });
  if (parse_end || !start(options, mpi_missing, argv[0], &endpoint)) {
    tca_harness::finish_reference_mpi();
    return parse_end ? *parse_end : 1;
  }

  const char* auto_transport = "?";
  check(tcaPeerTransport(endpoint.peer, &auto_transport), "tcaPeerTransport");
  Output output(options, g_rank);
  nlohmann::ordered_json mpi_reference = {{"runs", mpi_missing.empty()}};
  if (!mpi_missing.empty()) mpi_reference["reason"] = mpi_missing;
  output.report.set("mpi_reference", mpi_reference);
  const char* bootstrap = "?";
  check(tcaBootstrapInfo(&bootstrap, nullptr), "tcaBootstrapInfo");
  output.report.set("bootstrap", bootstrap);
  print_header(options, output, auto_transport, endpoint.peer);

  const bool all_verified = run_paths(options, endpoint, &output);
  if (options.json) output.report.print();

  finish(&endpoint);
  tca_harness::finish_reference_mpi();
  return all_verified ? 0 : 1;
}
