// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A GPU collective's engine: the CUDA and tca resources of its program (scratch, mapped peer
// buffers, the tables on the device, streams, the resident kernel's doorbell) and the running of
// host-called iterations. The program itself comes from device_engine_lowering.cc, its protocol
// and channels from device_engine_tuning.cc.
#include "coll/device_engine.h"

#include <cuda_runtime_api.h>
#include <sched.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "base/cuda_util.h"
#include "coll/device_engine_lowering.h"
#include "coll/device_engine_tuning.h"
#include "coll/device_kernel.h"
#include "coll/status.h"
#include "coll/team.h"
#include "tca/detail/coll_program.h"
#include "tca/tca_coll_cuda.h"
#include "tca/tca_cuda.h"

namespace tca::coll {
namespace {

using namespace tca_coll_program;

constexpr size_t kAlignment = 256;

size_t align_up(size_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

// An owner of CUDA memory that `release` frees (cudaFree, cudaFreeHost).
template <typename T, cudaError_t (*release)(void*)>
struct CudaMemory {
  T* ptr = nullptr;
  CudaMemory() = default;
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;
  ~CudaMemory() {
    if (ptr != nullptr) release(ptr);
  }
};
using DeviceMemory = CudaMemory<void, cudaFree>;
using MappedHostInt = CudaMemory<int, cudaFreeHost>;

// Both buffers device memory, aligned to their elements.
tcaResult check_buffers(const Shape& shape, const DeviceBuffers& buffers) {
  for (const void* buffer : {buffers.send, static_cast<const void*>(buffers.recv)})
    if (reinterpret_cast<uintptr_t>(buffer) % shape.element_bytes != 0)
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
               "GPU collective buffer {} is not aligned to its {}-byte elements", buffer,
               shape.element_bytes);
  for (const void* buffer : {buffers.send, static_cast<const void*>(buffers.recv)}) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, buffer) != cudaSuccess ||
        attributes.type != cudaMemoryTypeDevice) {
      cudaGetLastError();  // clear the sticky-free error of an unknown pointer
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
               "GPU collective buffer {} is not device memory (config.memory = TCA_MEM_GPU)",
               buffer);
    }
  }
  return TCA_SUCCESS;
}

class Engine final : public DeviceEngine {
 public:
  tcaResult build(const Shape& shape, const DeviceBuffers& buffers);

  tcaResult start() override {
    TCA_CHECK(check_no_failure());
    if (running_) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "the collective is running: wait first");
    TCA_CHECK(ring_server(&served_call_));
    if (!served_call_) {
      TCA_CHECK(enqueue(stream_, nullptr));
      TCA_CUDA_CHECK(cudaEventRecord(done_, stream_));
    }
    running_ = true;
    return TCA_SUCCESS;
  }
  tcaResult test(bool* done) override {
    if (!running_) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "the collective is not started");
    *done = false;
    if (served_call_) {
      if (completed() < rung_) {
        // The server ends only after serving this ring (or on an error, which this reports).
        const cudaError_t state = cudaEventQuery(server_ended_);
        if (state == cudaErrorNotReady || completed() >= rung_) return TCA_SUCCESS;
        running_ = false;
        TCA_CUDA_CHECK(state);
        TCA_FAIL(TCA_ERROR_TRANSPORT, "the resident kernel ended without serving iteration {}",
                 rung_);
      }
    } else {
      const cudaError_t state = cudaEventQuery(done_);
      if (state == cudaErrorNotReady) return TCA_SUCCESS;
      running_ = false;
      TCA_CUDA_CHECK(state);
    }
    running_ = false;
    *done = true;
    return check_no_failure();
  }
  tcaResult wait() override {
    // Spins first (a small collective ends within microseconds), then lets others run.
    constexpr int kSpins = 4096;
    for (int polls = 0;; ++polls) {
      if (served_call_ && completed() < rung_ && polls % 64 != 63) continue;  // no CUDA call
      bool done = false;
      TCA_CHECK(test(&done));
      if (done) return TCA_SUCCESS;
      if (polls >= kSpins) sched_yield();
    }
  }
  tcaResult enqueue(void* stream, uint64_t* stamps) override {
    TCA_CHECK(check_no_failure());
    Program program = program_host_;
    program.stamps = stamps;
    TCA_CUDA_CHECK(launch_program(program, threads_, static_cast<cudaStream_t>(stream)));
    return TCA_SUCCESS;
  }
  tcaResult device_handle(void** program, int* blocks) override {
    TCA_CHECK(check_no_failure());
    *program = program_.ptr;
    *blocks = channels_;
    return TCA_SUCCESS;
  }
  bool inline_protocol() const override { return inline_; }
  int channels() const override { return channels_; }
  const char* call_form() const override {
    return !served_call_ ? "launch" : server_started_for_call_ ? "resident_start" : "resident";
  }
  tcaResult copy(void* dst, const void* src, size_t bytes) override {
    // In the engine's stream (blocking: after the caller's default-stream work and this
    // engine's kernels), waited for: the result is there for work on any stream on return, and
    // no other engine's kernel, which may wait for a peer, holds the call up.
    TCA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_));
    TCA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return TCA_SUCCESS;
  }
  tcaResult release() override;
  bool belongs_to_current_job() const override {
    return recv_registered_ &&
           tcaHandleInfo(&recv_handle_, nullptr, nullptr, nullptr) == TCA_SUCCESS;
  }
  ~Engine() override {  // tca's memory is release()'s; the CUDA objects are the engine's
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    if (done_ != nullptr) cudaEventDestroy(done_);
    if (server_stream_ != nullptr) cudaStreamDestroy(server_stream_);
    if (server_ended_ != nullptr) cudaEventDestroy(server_ended_);
  }

 private:
  uint64_t completed() const { return volatile_bell()->completed; }
  volatile Doorbell* volatile_bell() const { return bell_.ptr; }

  // A host-called iteration through the resident kernel (tcaCollConfig.resident_idle_us), when
  // it keeps the form's order (nothing pending on the legacy default stream, which a launch
  // would follow); *served = false: launch it instead.
  tcaResult ring_server(bool* served) {
    *served = false;
    server_started_for_call_ = false;
    if (bell_.ptr == nullptr) return TCA_SUCCESS;
    const cudaError_t legacy = cudaStreamQuery(cudaStreamLegacy);
    if (legacy == cudaErrorNotReady) return TCA_SUCCESS;
    TCA_CUDA_CHECK(legacy);
    volatile Doorbell* bell = volatile_bell();
    bell->requested = ++rung_;
    std::atomic_thread_fence(std::memory_order_seq_cst);  // the ring before the look at leaving
    // Leaving or gone: either it saw the ring (and clears `leaving`) or it ends; then a new one.
    for (int looks = 0; !server_launched_ || bell->leaving != 0; ++looks) {
      const cudaError_t state = server_launched_ ? cudaEventQuery(server_ended_) : cudaSuccess;
      if (state == cudaErrorNotReady) {
        if (looks > 4096) sched_yield();
        continue;
      }
      TCA_CUDA_CHECK(state);
      bell->leaving = 0;
      TCA_CUDA_CHECK(
          launch_server(program_host_, threads_, bell_device_, resident_idle_ns_, server_stream_));
      TCA_CUDA_CHECK(cudaEventRecord(server_ended_, server_stream_));
      server_launched_ = true;
      server_started_for_call_ = true;
      break;
    }
    *served = true;
    return TCA_SUCCESS;
  }

  tcaResult check_no_failure() const {
    const int failure = error_.ptr != nullptr ? *const_cast<volatile int*>(error_.ptr) : 0;
    if (failure != 0)
      TCA_FAIL(static_cast<tcaResult>(failure),
               "an iteration of this GPU collective ended early ({}): free it and make a new one",
               tcaGetErrorString(static_cast<tcaResult>(failure)));
    return TCA_SUCCESS;
  }

  // This rank's part: its scratch allocated and zeroed, its scratch and receive buffer registered.
  tcaResult register_own(const DeviceBuffers& buffers, size_t scratch_bytes);
  // Once every rank made its part (the scratch zeroed before any peer learns where it is), every
  // rank's scratch and receive buffer mapped for this GPU.
  tcaResult map_buffers(const TeamView& team, const DeviceBuffers& buffers, size_t scratch_bytes,
                        LoweringAddresses* addresses);
  // The program's tables and counters in device memory, the program itself, the error cell.
  tcaResult upload(const std::vector<Channel>& channel_table,
                   const std::vector<Instruction>& instructions,
                   const std::vector<Segment>& segments, const DeviceBuffers& buffers);
  // The stream of host-called iterations, and the resident kernel's doorbell and stream.
  tcaResult create_streams(unsigned resident_idle_us);

  bool inline_ = false;
  int channels_ = 1;
  int threads_ = 1;

  unsigned char* scratch_ = nullptr;  // tcaMalloc'd: signals, then two parity blocks
  tcaHandle scratch_handle_{};
  tcaHandle recv_handle_{};
  bool recv_registered_ = false;

  Program program_host_{};  // what kernels get by value
  DeviceMemory program_;    // the same, for tcaDeviceCollRun
  DeviceMemory tables_;     // channels, instructions, segments, call counters
  MappedHostInt error_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  bool running_ = false;
  // The resident kernel of host-called iterations (none when bell_ is null).
  CudaMemory<Doorbell, cudaFreeHost> bell_;
  Doorbell* bell_device_ = nullptr;  // the kernel's address of *bell_
  uint64_t resident_idle_ns_ = 0;
  cudaStream_t server_stream_ = nullptr;  // non-blocking: the kernel never holds up others
  cudaEvent_t server_ended_ = nullptr;
  bool server_launched_ = false;  // since then server_ended_ tells whether it is still there
  uint64_t rung_ = 0;             // iterations asked of it
  bool served_call_ = false;      // the running iteration is the resident kernel's
  bool server_started_for_call_ = false;  // ... which was launched for it
};

tcaResult Engine::build(const Shape& shape, const DeviceBuffers& buffers) {
  TeamView team;
  TCA_CHECK(team_view(buffers.team, &team));
  TCA_CHECK(check_buffers(shape, buffers));
  DeviceTuning tuning;
  TCA_CHECK(choose_device_tuning(shape.kind, buffers.recv_bytes, shape.count, &tuning));
  inline_ = tuning.inline_protocol;
  channels_ = tuning.channels;
  threads_ = tuning.threads;
  DeviceLowering lowering;
  TCA_CHECK(lowering.plan(shape, team.me, team.size(), inline_, channels_));
  LoweringAddresses addresses;
  TCA_CHECK(map_buffers(team, buffers, lowering.scratch_bytes(), &addresses));
  std::vector<Channel> channel_table;
  std::vector<Instruction> instructions;
  std::vector<Segment> segments;
  lowering.emit(addresses, &channel_table, &instructions, &segments);
  TCA_CHECK(upload(channel_table, instructions, segments, buffers));
  return create_streams(buffers.resident_idle_us);
}

tcaResult Engine::register_own(const DeviceBuffers& buffers, size_t scratch_bytes) {
  void* scratch = nullptr;
  TCA_CHECK(tcaMalloc(&scratch, scratch_bytes, TCA_MEM_GPU));
  scratch_ = static_cast<unsigned char*>(scratch);
  // Zeroed before a peer writes; waiting for this alone (a device-wide wait would wait for
  // other collectives' kernels, which may wait for a peer that is building this one).
  TCA_CHECK(zero_and_wait(scratch_, scratch_bytes));
  TCA_CHECK(tcaCreateHandle(&scratch_handle_, scratch_, scratch_bytes, TCA_MEM_GPU));
  TCA_CHECK(tcaCreateHandle(&recv_handle_, buffers.recv, buffers.recv_bytes, TCA_MEM_GPU));
  recv_registered_ = true;
  return TCA_SUCCESS;
}

tcaResult Engine::map_buffers(const TeamView& team, const DeviceBuffers& buffers,
                              size_t scratch_bytes, LoweringAddresses* addresses) {
  // A member whose own part failed still tells the others, who would wait for its handles.
  TCA_CHECK(team_agree(team, register_own(buffers, scratch_bytes)));
  const int ranks = team.size();
  addresses->send = buffers.send;
  addresses->scratch.assign(ranks, nullptr);
  addresses->recv.assign(ranks, nullptr);
  addresses->scratch[team.me] = scratch_;
  addresses->recv[team.me] = static_cast<unsigned char*>(buffers.recv);
  if (ranks == 1) return TCA_SUCCESS;
  std::vector<tcaHandle> scratches(ranks), recvs(ranks);
  TCA_CHECK(team_allgather_handles(team, &scratch_handle_, scratches.data()));
  TCA_CHECK(team_allgather_handles(team, &recv_handle_, recvs.data()));
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == team.me) continue;
    void* mapped = nullptr;
    TCA_CHECK(tcaDevicePointer(&mapped, &scratches[peer], 0, scratch_bytes));
    addresses->scratch[peer] = static_cast<unsigned char*>(mapped);
    TCA_CHECK(tcaDevicePointer(&mapped, &recvs[peer], 0, buffers.recv_bytes));
    addresses->recv[peer] = static_cast<unsigned char*>(mapped);
  }
  return TCA_SUCCESS;
}

tcaResult Engine::upload(const std::vector<Channel>& channel_table,
                         const std::vector<Instruction>& instructions,
                         const std::vector<Segment>& segments, const DeviceBuffers& buffers) {
  const size_t channel_bytes = align_up(channel_table.size() * sizeof(Channel));
  const size_t instruction_bytes = align_up(instructions.size() * sizeof(Instruction));
  const size_t segment_bytes = align_up(segments.size() * sizeof(Segment));
  const size_t counter_bytes = align_up(channels_ * sizeof(uint64_t) + sizeof(int));
  TCA_CUDA_CHECK(
      cudaMalloc(&tables_.ptr, channel_bytes + instruction_bytes + segment_bytes + counter_bytes));
  auto* tables = static_cast<unsigned char*>(tables_.ptr);
  // The copies go through a stream of their own, waited for at the end: landed on return (the
  // program may start in a stream that follows no other), held up by no other stream's work.
  CudaStream stream;
  TCA_CHECK(make_stream(cudaStreamNonBlocking, &stream));
  const auto copy = [&stream](void* dst, const void* src, size_t bytes) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream.get());
  };
  TCA_CUDA_CHECK(copy(tables, channel_table.data(), channel_table.size() * sizeof(Channel)));
  TCA_CUDA_CHECK(
      copy(tables + channel_bytes, instructions.data(), instructions.size() * sizeof(Instruction)));
  TCA_CUDA_CHECK(copy(tables + channel_bytes + instruction_bytes, segments.data(),
                      segments.size() * sizeof(Segment)));
  unsigned char* counters = tables + channel_bytes + instruction_bytes + segment_bytes;
  TCA_CUDA_CHECK(cudaMemsetAsync(counters, 0, counter_bytes, stream.get()));
  TCA_CUDA_CHECK(
      cudaHostAlloc(reinterpret_cast<void**>(&error_.ptr), sizeof(int), cudaHostAllocMapped));
  *error_.ptr = 0;
  int* error_on_device = nullptr;
  TCA_CUDA_CHECK(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&error_on_device), error_.ptr, 0));

  int timeout_ms = 0;
  TCA_CHECK(tcaGetTimeout(&timeout_ms));
  Program program{};
  program.channels = static_cast<uint32_t>(channels_);
  program.type = static_cast<uint32_t>(buffers.type);
  program.op = static_cast<uint32_t>(buffers.op);
  program.timeout_ns = static_cast<uint64_t>(timeout_ms) * 1000000u;
  program.started = reinterpret_cast<uint64_t*>(counters);
  program.failure = reinterpret_cast<int*>(counters + channels_ * sizeof(uint64_t));
  program.error = error_on_device;
  program.channel = reinterpret_cast<const Channel*>(tables);
  program.instruction = reinterpret_cast<const Instruction*>(tables + channel_bytes);
  program.segment = reinterpret_cast<const Segment*>(tables + channel_bytes + instruction_bytes);
  TCA_CUDA_CHECK(cudaMalloc(&program_.ptr, sizeof(Program)));
  TCA_CUDA_CHECK(copy(program_.ptr, &program, sizeof(Program)));
  TCA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  program_host_ = program;
  return TCA_SUCCESS;
}

tcaResult Engine::create_streams(unsigned resident_idle_us) {
  // Host-called iterations follow the legacy default stream (a blocking stream).
  TCA_CUDA_CHECK(cudaStreamCreate(&stream_));
  TCA_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  if (resident_idle_us != 0 && channels_ == 1) {
    TCA_CUDA_CHECK(
        cudaHostAlloc(reinterpret_cast<void**>(&bell_.ptr), sizeof(Doorbell), cudaHostAllocMapped));
    std::memset(bell_.ptr, 0, sizeof(Doorbell));
    TCA_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&bell_device_), bell_.ptr, 0));
    resident_idle_ns_ = uint64_t{resident_idle_us} * 1000u;
    TCA_CUDA_CHECK(cudaStreamCreateWithFlags(&server_stream_, cudaStreamNonBlocking));
    TCA_CUDA_CHECK(cudaEventCreateWithFlags(&server_ended_, cudaEventDisableTiming));
  }
  return TCA_SUCCESS;
}

tcaResult Engine::release() {
  tcaResult first_failure = TCA_SUCCESS;
  auto keep_first = [&first_failure](tcaResult result) {
    if (first_failure == TCA_SUCCESS) first_failure = result;
  };
  if (server_launched_) {  // sent away, so that the device synchronization below ends
    volatile_bell()->requested = kStopServing;
    server_launched_ = false;
  }
  // Iterations enqueued on any stream may still run: they use the program and the memory.
  if (const cudaError_t synced = cudaDeviceSynchronize(); synced != cudaSuccess)
    keep_first(record_error(TCA_ERROR_TRANSPORT, __FILE__, __LINE__,
                            std::string("cudaDeviceSynchronize: ") + cudaGetErrorString(synced)));
  if (recv_registered_) keep_first(tcaDestroyHandle(&recv_handle_));
  recv_registered_ = false;
  if (scratch_ != nullptr) keep_first(tcaFree(scratch_));  // also deregisters its handle
  scratch_ = nullptr;
  running_ = false;
  return first_failure;
}

}  // namespace

tcaResult make_device_engine(const Shape& shape, const DeviceBuffers& buffers,
                             std::unique_ptr<DeviceEngine>* out) {
  auto engine = std::make_unique<Engine>();
  if (const tcaResult built = engine->build(shape, buffers); built != TCA_SUCCESS) {
    const ErrorKeeper keep;  // the failure's message, not the clean-up's
    engine->release();       // what it had allocated of tca's memory (the scratch, a registration)
    return append_frame(built, __FILE__, __LINE__);
  }
  *out = std::move(engine);
  return TCA_SUCCESS;
}

}  // namespace tca::coll
