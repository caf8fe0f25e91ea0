// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Lowers a collective's schedules to a GPU program (tca/detail/coll_program.h).
//
// The data is split into channels: channel c takes elements [count*c/C, count*(c+1)/C) of every
// rank's vector and runs the whole algorithm on them as a collective of its own, with its own
// scratch, signals and mailboxes, in block c of the grid. So blocks never wait for each other, and
// a schedule built for the channel's element count is reused as it is; only its places are
// translated into the real buffers.
//
// Two protocols move a step's data. simple: the block stores the pieces into the peer's memory with
// wide stores, then raises the peer's signal cell for the step with a system-scope release. inline:
// the pieces travel as one inline message (tcaDeviceInlinePut) into a mailbox in the receiver's
// scratch, which the receiver unpacks to where the pieces belong: no fence, so a step costs about
// one store's flight; half of each store is flag, so it is for small data. Writes into a receiver's
// receive buffer that nothing orders after its start wait for its credit (simple protocol; inline
// messages only land in scratch). Scratch and mailboxes are double-buffered by iteration parity:
// docs/COLLECTIVES.md explains why that is enough.
#include "coll/device_engine.h"

#include <cuda_runtime_api.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/cuda_util.h"
#include "base/settings.h"
#include "coll/status.h"
#include "coll/team.h"
#include "tca/detail/coll_program.h"
#include "tca/tca_coll_cuda.h"
#include "tca/tca_cuda.h"
#include "tuning/collective_choice.h"
#include "tuning/rules.h"

namespace tca::coll {

// Launches one iteration of `program`, a block of `threads` per channel (device_kernel.cu).
cudaError_t launch_program(const tca_coll_program::Program& program, int threads,
                           cudaStream_t stream);
// Starts the resident kernel of host-called iterations of a one-channel `program`.
cudaError_t launch_server(const tca_coll_program::Program& program, int threads,
                          tca_coll_program::Doorbell* bell, uint64_t idle_ns, cudaStream_t stream);

namespace {

using namespace tca_coll_program;

constexpr size_t kAlignment = 256;

size_t align_up(size_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

// The bytes a send's pieces carry.
size_t payload_bytes(const std::vector<Piece>& pieces) {
  size_t bytes = 0;
  for (const Piece& piece : pieces) bytes += piece.width * piece.count;
  return bytes;
}

// Mailbox cells of an inline message (tcaInlineCells of tca_device.cuh): 4 data bytes each.
size_t inline_cells(size_t bytes) { return (bytes + 3) / 4; }

bool overlaps(Place place, size_t bytes, Place other, size_t other_bytes) {
  return place.buffer == other.buffer && place.offset < other.offset + other_bytes &&
         other.offset < place.offset + bytes;
}

// Whether an op from `first` on reads any of `bytes` at `place` (of this rank's buffers).
bool read_later(const std::vector<Op>& ops, size_t first, Place place, size_t bytes,
                size_t element_bytes) {
  for (size_t index = first; index < ops.size(); ++index) {
    const Op& op = ops[index];
    switch (op.kind) {
      case OpKind::kSend:
        for (const Piece& piece : op.pieces) {
          const size_t span =
              piece.count == 0 ? 0 : (piece.count - 1) * piece.src_pitch + piece.width;
          if (overlaps(place, bytes, piece.src, span)) return true;
        }
        break;
      case OpKind::kReduce:
        if (overlaps(place, bytes, op.a, op.length * element_bytes) ||
            overlaps(place, bytes, op.b, op.length * element_bytes))
          return true;
        break;
      case OpKind::kCopy:
        if (overlaps(place, bytes, op.a, op.length)) return true;
        break;
      case OpKind::kAwait:
        break;
    }
  }
  return false;
}

// Environment overrides, which must be equal on every rank.
tcaResult protocol_from_environment(tcaCollKind kind, size_t result_bytes, bool* inline_protocol) {
  std::string choice;
  TCA_CHECK(setting_choice("TCA_COLL_PROTOCOL", &choice));
  if (choice == "ll" || choice == "inline") {
    *inline_protocol = true;
  } else if (choice == "simple") {
    *inline_protocol = false;
  } else {
    *inline_protocol = tuning::gpu_inline_protocol(kind, result_bytes);
  }
  return TCA_SUCCESS;
}

tcaResult channels_from_environment(size_t result_bytes, bool inline_protocol, size_t count,
                                    int* channels) {
  size_t wanted = tuning::gpu_channels(result_bytes, inline_protocol);
  int64_t parsed = 0;
  bool set = false;
  TCA_CHECK(setting_count("TCA_COLL_CHANNELS", &parsed, &set));
  if (set) wanted = static_cast<size_t>(parsed);
  *channels = static_cast<int>(std::min(wanted, count));  // every channel has an element
  return TCA_SUCCESS;
}

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

struct Run {
  size_t offset;  // in the real buffer
  size_t bytes;
};

// A segment before its ends are resolved to addresses.
struct Span {
  Buffer dst_buffer;
  size_t dst_offset;
  Buffer src_buffer;
  size_t src_offset;
  size_t bytes;
};

class Engine final : public DeviceEngine {
 public:
  tcaResult build(const Shape& shape, const DeviceBuffers& buffers);

  tcaResult start() override {
    TCA_CHECK(check_no_failure());
    if (running_) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "the collective is running: wait first");
    TCA_CHECK(ring_server(&served_call_));
    if (!served_call_) {
      TCA_CHECK(enqueue(stream_));
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
  tcaResult enqueue(void* stream) override {
    TCA_CHECK(check_no_failure());
    TCA_CUDA_CHECK(launch_program(program_host_, threads_, static_cast<cudaStream_t>(stream)));
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
  tcaResult copy(void* dst, const void* src, size_t bytes) override {
    TCA_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
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

  // ---- layout, equal on every rank ----
  size_t channel_first(int channel) const { return shape_.count * channel / channels_; }
  size_t channel_count(int channel) const {
    return channel_first(channel + 1) - channel_first(channel);
  }
  unsigned char* scratch_base(int owner) const {
    return owner == rank_ ? scratch_ : peer_scratch_[owner];
  }
  uint64_t* signal_cell(int owner, int channel, size_t index) const {
    return reinterpret_cast<uint64_t*>(scratch_base(owner)) + channel * cells_per_channel_ + index;
  }
  uint64_t* credit_cell(int owner, int channel, int from) const {
    return signal_cell(owner, channel, steps_ + from);
  }
  unsigned char* parity_base(int owner, int parity) const {
    return scratch_base(owner) + signal_bytes_ + parity * parity_bytes_;
  }
  uint64_t* mailbox(int owner, int channel, int step, int parity) const {
    return reinterpret_cast<uint64_t*>(parity_base(owner, parity) + mailbox_offset_[channel][step]);
  }

  // The runs of a place of channel `channel`'s schedule in the real buffer.
  std::vector<Run> runs(int channel, Buffer buffer, size_t offset, size_t bytes) const;
  unsigned char* address(int owner, int channel, int parity, Buffer buffer, size_t offset) const;
  // The pieces of a send as spans, row by row, split where either end's runs split.
  std::vector<Span> spans(int channel, const std::vector<Piece>& pieces, bool split_dst,
                          bool split_src) const;
  // The send of `sender` that `receiver`'s await of `step` waits for (null if none).
  const Op* matching_send(int channel, int sender, int receiver, int step) const;

  tcaResult emit_channel(int channel, int parity, std::vector<Instruction>* instructions,
                         std::vector<Segment>* segments) const;
  void send_from_reduction(size_t first_instruction, std::vector<Instruction>* instructions,
                           std::vector<Segment>* segments) const;

  int rank_ = 0;
  int ranks_ = 1;
  Shape shape_;
  DeviceBuffers buffers_;
  bool inline_ = false;
  int channels_ = 1;
  int threads_ = tuning::kSimpleThreads;
  std::vector<std::vector<Schedule>> schedules_;  // [channel][rank]
  size_t steps_ = 0;                              // signal cells of steps, per channel
  size_t cells_per_channel_ = 0;                  // steps, then a credit cell per rank
  size_t signal_bytes_ = 0;
  size_t parity_bytes_ = 0;
  std::vector<size_t> scratch_offset_;               // [channel], in a parity block
  std::vector<std::vector<size_t>> mailbox_offset_;  // [channel][step], in a parity block

  unsigned char* scratch_ = nullptr;  // tcaMalloc'd: signals, then two parity blocks
  tcaHandle scratch_handle_{};
  tcaHandle recv_handle_{};
  bool recv_registered_ = false;
  std::vector<unsigned char*> peer_scratch_;
  std::vector<unsigned char*> peer_recv_;

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
};

std::vector<Run> Engine::runs(int channel, Buffer buffer, size_t offset, size_t bytes) const {
  const size_t first = channel_first(channel) * shape_.element_bytes;
  if (buffer == Buffer::kScratch) return {{offset, bytes}};
  if (buffer == Buffer::kSend || shape_.kind == TCA_COLL_ALLREDUCE)
    return {{first + offset, bytes}};
  // An allgather's receive buffer: the channel's schedule sees rank blocks of its own width, which
  // lie at the rank's block in the real buffer, shifted by the channel's first element.
  const size_t block = channel_count(channel) * shape_.element_bytes;
  std::vector<Run> result;
  while (bytes > 0) {
    const size_t rank = offset / block;
    const size_t within = offset % block;
    const size_t take = std::min(bytes, block - within);
    result.push_back({rank * shape_.count * shape_.element_bytes + first + within, take});
    offset += take;
    bytes -= take;
  }
  return result;
}

unsigned char* Engine::address(int owner, int channel, int parity, Buffer buffer,
                               size_t offset) const {
  switch (buffer) {
    case Buffer::kSend:  // only ever read locally
      return static_cast<unsigned char*>(const_cast<void*>(buffers_.send)) + offset;
    case Buffer::kRecv:
      return (owner == rank_ ? static_cast<unsigned char*>(buffers_.recv) : peer_recv_[owner]) +
             offset;
    case Buffer::kScratch:
      return parity_base(owner, parity) + scratch_offset_[channel] + offset;
  }
  return nullptr;
}

std::vector<Span> Engine::spans(int channel, const std::vector<Piece>& pieces, bool split_dst,
                                bool split_src) const {
  std::vector<Span> result;
  for (const Piece& piece : pieces) {
    for (size_t row = 0; row < piece.count; ++row) {
      const size_t dst_offset = piece.dst.offset + row * piece.dst_pitch;
      const size_t src_offset = piece.src.offset + row * piece.src_pitch;
      const std::vector<Run> dst = split_dst
                                       ? runs(channel, piece.dst.buffer, dst_offset, piece.width)
                                       : std::vector<Run>{{dst_offset, piece.width}};
      const std::vector<Run> src = split_src
                                       ? runs(channel, piece.src.buffer, src_offset, piece.width)
                                       : std::vector<Run>{{src_offset, piece.width}};
      // Walk both run lists together; every span lies inside one run of each.
      size_t d = 0, s = 0, d_used = 0, s_used = 0;
      while (d < dst.size() && s < src.size()) {
        const size_t take = std::min(dst[d].bytes - d_used, src[s].bytes - s_used);
        result.push_back({piece.dst.buffer, dst[d].offset + d_used, piece.src.buffer,
                          src[s].offset + s_used, take});
        d_used += take;
        s_used += take;
        if (d_used == dst[d].bytes) ++d, d_used = 0;
        if (s_used == src[s].bytes) ++s, s_used = 0;
      }
    }
  }
  return result;
}

const Op* Engine::matching_send(int channel, int sender, int receiver, int step) const {
  for (const Op& op : schedules_[channel][sender].ops)
    if (op.kind == OpKind::kSend && op.peer == receiver && op.step == step) return &op;
  return nullptr;
}

// An inline send of exactly the result of the inline reduction before it (recursive
// doubling's next step) goes out from that reduction's registers: no reload, no barrier. Only
// within the list that starts at `first_instruction` (lists of other channels and parities
// precede it in the vector).
void Engine::send_from_reduction(size_t first_instruction, std::vector<Instruction>* instructions,
                                 std::vector<Segment>* segments) const {
  if (instructions->size() < first_instruction + 2) return;
  const Instruction& send = instructions->back();
  Instruction& reduction = (*instructions)[instructions->size() - 2];
  if (send.kind != kInlineSend || send.segments != 1 || reduction.kind != kInlineAwaitReduce ||
      reduction.forward != nullptr)
    return;
  const Segment& sent = (*segments)[send.first_segment];
  const uint64_t result_bytes = reduction.count * shape_.element_bytes;
  if (static_cast<const void*>(sent.src) != reduction.dst || sent.bytes != result_bytes ||
      send.bytes != result_bytes)
    return;
  reduction.forward = send.cells;
  segments->pop_back();  // the send's only segment, the last one added
  instructions->pop_back();
}

tcaResult Engine::emit_channel(int channel, int parity, std::vector<Instruction>* instructions,
                               std::vector<Segment>* segments) const {
  const Schedule& mine = schedules_[channel][rank_];
  const size_t first_instruction = instructions->size();  // this list's first
  auto add = [&](Instruction instruction, const std::vector<Span>& spans, int dst_owner) {
    instruction.first_segment = static_cast<uint32_t>(segments->size());
    for (const Span& span : spans) {
      if (span.bytes == 0) continue;
      Segment segment{};
      segment.dst = address(dst_owner, channel, parity, span.dst_buffer, span.dst_offset);
      segment.src = address(rank_, channel, parity, span.src_buffer, span.src_offset);
      if (instruction.kind == kCopy && segment.dst == segment.src) continue;  // in place
      segment.bytes = span.bytes;
      segments->push_back(segment);
    }
    instruction.segments = static_cast<uint32_t>(segments->size()) - instruction.first_segment;
    if (instruction.kind == kCopy && instruction.segments == 0) return;
    // A local copy of exactly what the send before it read (the own block of an allgather)
    // rides along with that send: one read for both stores.
    if (instruction.kind == kCopy && instruction.segments == 1 &&
        instructions->size() > first_instruction) {
      const Instruction& before = instructions->back();
      Segment& copied = (*segments)[instruction.first_segment];
      if (before.kind == kSend && before.segments == 1) {
        Segment& sent = (*segments)[before.first_segment];
        if (sent.src == copied.src && sent.bytes == copied.bytes && sent.local_copy == nullptr) {
          sent.local_copy = copied.dst;
          segments->pop_back();
          return;
        }
      }
    }
    instructions->push_back(instruction);
  };

  std::vector<bool> credited(ranks_, false);
  if (!inline_) {
    // Writers that put into this rank's receive buffer before knowing it has started.
    for (int writer = 0; writer < ranks_; ++writer) {
      if (writer == rank_) continue;
      const auto& theirs = schedules_[channel][writer].ops;
      if (std::any_of(theirs.begin(), theirs.end(), [&](const Op& op) {
            return op.kind == OpKind::kSend && op.needs_credit && op.peer == rank_;
          })) {
        Instruction credit{};
        credit.kind = kPostCredit;
        credit.signal = credit_cell(writer, channel, rank_);
        instructions->push_back(credit);
      }
    }
  }
  for (size_t index = 0; index < mine.ops.size(); ++index) {
    const Op& op = mine.ops[index];
    Instruction instruction{};
    switch (op.kind) {
      case OpKind::kSend:
        if (inline_ && !op.pieces.empty()) {
          instruction.kind = kInlineSend;
          instruction.cells = mailbox(op.peer, channel, op.step, parity);
          instruction.bytes = payload_bytes(op.pieces);
          // Only the source side matters: the receiver unpacks by its own (dst) spans.
          std::vector<Span> sources = spans(channel, op.pieces, false, true);
          for (Span& span : sources) span.dst_buffer = Buffer::kScratch, span.dst_offset = 0;
          add(instruction, sources, rank_);
          send_from_reduction(first_instruction, instructions, segments);
          break;
        }
        if (!inline_ && op.needs_credit && !credited[op.peer]) {
          credited[op.peer] = true;
          Instruction credit{};
          credit.kind = kAwaitCredit;
          credit.signal = credit_cell(rank_, channel, op.peer);
          instructions->push_back(credit);
        }
        instruction.kind = kSend;
        instruction.signal = signal_cell(op.peer, channel, op.step);
        add(instruction, spans(channel, op.pieces, true, true), op.peer);
        break;
      case OpKind::kAwait: {
        // build() checked that every await has its send.
        const Op& send = *matching_send(channel, op.peer, rank_, op.step);
        if (inline_ && !send.pieces.empty()) {
          instruction.kind = kInlineAwait;
          instruction.cells = mailbox(rank_, channel, op.step, parity);
          instruction.bytes = payload_bytes(send.pieces);
          // Segments name the destinations (in this rank's buffers); their sources are unused.
          std::vector<Span> destinations = spans(channel, send.pieces, true, false);
          for (Span& span : destinations) span.src_buffer = Buffer::kScratch, span.src_offset = 0;
          add(instruction, destinations, rank_);
        } else {
          instruction.kind = kAwait;
          instruction.signal = signal_cell(rank_, channel, op.step);
          instructions->push_back(instruction);
        }
        break;
      }
      case OpKind::kReduce: {
        instruction.kind = kReduce;
        const size_t bytes = op.length * shape_.element_bytes;
        instruction.dst = address(rank_, channel, parity, op.dst.buffer,
                                  runs(channel, op.dst.buffer, op.dst.offset, bytes)[0].offset);
        instruction.a = address(rank_, channel, parity, op.a.buffer,
                                runs(channel, op.a.buffer, op.a.offset, bytes)[0].offset);
        instruction.b = address(rank_, channel, parity, op.b.buffer,
                                runs(channel, op.b.buffer, op.b.offset, bytes)[0].offset);
        instruction.count = op.length;
        // An inline message that lands in scratch only to be reduced right away is reduced
        // straight from the mailbox (kInlineAwaitReduce) when nothing later reads it there.
        if (inline_ && instructions->size() > first_instruction &&
            instructions->back().kind == kInlineAwait && instructions->back().segments == 1 &&
            op.b.buffer == Buffer::kScratch &&
            !read_later(mine.ops, index + 1, op.b, bytes, shape_.element_bytes)) {
          const Instruction await = instructions->back();
          const Segment& landed = (*segments)[await.first_segment];
          if (landed.dst == instruction.b && landed.bytes == bytes && await.bytes == bytes) {
            segments->pop_back();
            instruction.kind = kInlineAwaitReduce;
            instruction.cells = await.cells;
            instruction.bytes = await.bytes;
            instruction.b = nullptr;
            instructions->back() = instruction;
            break;
          }
        }
        instructions->push_back(instruction);
        break;
      }
      case OpKind::kCopy: {
        instruction.kind = kCopy;
        const Piece whole{op.dst, op.a, op.length, 1, op.length, op.length};
        add(instruction, spans(channel, {whole}, true, true), rank_);
        break;
      }
    }
  }
  return TCA_SUCCESS;
}

tcaResult Engine::build(const Shape& shape, const DeviceBuffers& buffers) {
  TeamView team;
  TCA_CHECK(team_view(buffers.team, &team));
  rank_ = team.me;
  ranks_ = team.size();
  shape_ = shape;
  buffers_ = buffers;
  for (const void* buffer : {buffers.send, static_cast<const void*>(buffers.recv)})
    if (reinterpret_cast<uintptr_t>(buffer) % shape_.element_bytes != 0)
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
               "GPU collective buffer {} is not aligned to its {}-byte elements", buffer,
               shape_.element_bytes);
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
  TCA_CHECK(protocol_from_environment(shape_.kind, buffers.recv_bytes, &inline_));
  TCA_CHECK(channels_from_environment(buffers.recv_bytes, inline_, shape_.count, &channels_));
  // Inline messages land in mailboxes and need no credits: staging in scratch only adds copies.
  if (inline_) shape_.staged_allgather_bytes = 0;
  threads_ = tuning::gpu_threads(inline_, buffers.recv_bytes / channels_);

  // Every rank's schedule of every channel: who sends what to whom is needed on both ends.
  schedules_.assign(channels_, std::vector<Schedule>(ranks_));
  for (int channel = 0; channel < channels_; ++channel) {
    Shape part = shape_;
    part.count = channel_count(channel);
    for (int rank = 0; rank < ranks_; ++rank) {
      schedules_[channel][rank] = build_schedule(part, rank);
      for (const Op& op : schedules_[channel][rank].ops)
        steps_ = std::max(steps_, static_cast<size_t>(op.step) + 1);
    }
  }
  cells_per_channel_ = steps_ + ranks_;
  signal_bytes_ = align_up(static_cast<size_t>(channels_) * cells_per_channel_ * sizeof(uint64_t));
  scratch_offset_.resize(channels_);
  mailbox_offset_.assign(channels_, std::vector<size_t>(steps_, 0));
  size_t cursor = 0;
  for (int channel = 0; channel < channels_; ++channel) {
    scratch_offset_[channel] = cursor;
    cursor += align_up(schedules_[channel][0].scratch_bytes);  // equal on every rank
    std::vector<size_t> mailbox_bytes(steps_, 0);
    for (int rank = 0; rank < ranks_; ++rank) {
      for (const Op& op : schedules_[channel][rank].ops) {
        if (op.kind == OpKind::kAwait) {
          if (matching_send(channel, op.peer, rank, op.step) == nullptr)
            TCA_FAIL(TCA_ERROR_INTERNAL,
                     "rank {} awaits step {} from rank {}, which never sends it", rank, op.step,
                     op.peer);
        }
        if (!inline_ || op.kind != OpKind::kSend) continue;
        mailbox_bytes[op.step] = std::max(
            mailbox_bytes[op.step], inline_cells(payload_bytes(op.pieces)) * sizeof(uint64_t));
      }
    }
    for (size_t step = 0; step < steps_; ++step) {
      mailbox_offset_[channel][step] = cursor;
      cursor += align_up(mailbox_bytes[step]);
    }
  }
  parity_bytes_ = cursor;

  // Scratch: zero (signals, mailboxes) before any peer learns where it is.
  const size_t scratch_bytes = signal_bytes_ + 2 * parity_bytes_;
  void* scratch = nullptr;
  TCA_CHECK(tcaMalloc(&scratch, scratch_bytes, TCA_MEM_GPU));
  scratch_ = static_cast<unsigned char*>(scratch);
  TCA_CUDA_CHECK(cudaMemset(scratch_, 0, scratch_bytes));
  TCA_CUDA_CHECK(cudaDeviceSynchronize());
  TCA_CHECK(tcaCreateHandle(&scratch_handle_, scratch_, scratch_bytes, TCA_MEM_GPU));
  TCA_CHECK(tcaCreateHandle(&recv_handle_, buffers.recv, buffers.recv_bytes, TCA_MEM_GPU));
  recv_registered_ = true;
  peer_scratch_.assign(ranks_, nullptr);
  peer_recv_.assign(ranks_, nullptr);
  if (ranks_ > 1) {
    std::vector<tcaHandle> scratches(ranks_), recvs(ranks_);
    TCA_CHECK(team_allgather_handles(team, &scratch_handle_, scratches.data()));
    TCA_CHECK(team_allgather_handles(team, &recv_handle_, recvs.data()));
    for (int peer = 0; peer < ranks_; ++peer) {
      if (peer == rank_) continue;
      void* mapped = nullptr;
      TCA_CHECK(tcaDevicePointer(&mapped, &scratches[peer], 0, scratch_bytes));
      peer_scratch_[peer] = static_cast<unsigned char*>(mapped);
      TCA_CHECK(tcaDevicePointer(&mapped, &recvs[peer], 0, buffers.recv_bytes));
      peer_recv_[peer] = static_cast<unsigned char*>(mapped);
    }
  }

  // The program: instructions of every channel and parity, then the tables in one allocation.
  std::vector<Channel> channel_table(channels_);
  std::vector<Instruction> instructions;
  std::vector<Segment> segments;
  for (int channel = 0; channel < channels_; ++channel) {
    for (int parity = 0; parity < 2; ++parity) {
      channel_table[channel].first_instruction[parity] = static_cast<uint32_t>(instructions.size());
      channel_table[channel].first_segment[parity] = static_cast<uint32_t>(segments.size());
      TCA_CHECK(emit_channel(channel, parity, &instructions, &segments));
      channel_table[channel].segments[parity] =
          static_cast<uint32_t>(segments.size()) - channel_table[channel].first_segment[parity];
      channel_table[channel].instructions[parity] =
          static_cast<uint32_t>(instructions.size()) -
          channel_table[channel].first_instruction[parity];
    }
  }
  const size_t channel_bytes = align_up(channel_table.size() * sizeof(Channel));
  const size_t instruction_bytes = align_up(instructions.size() * sizeof(Instruction));
  const size_t segment_bytes = align_up(segments.size() * sizeof(Segment));
  const size_t counter_bytes = align_up(channels_ * sizeof(uint64_t) + sizeof(int));
  TCA_CUDA_CHECK(
      cudaMalloc(&tables_.ptr, channel_bytes + instruction_bytes + segment_bytes + counter_bytes));
  auto* tables = static_cast<unsigned char*>(tables_.ptr);
  TCA_CUDA_CHECK(cudaMemcpy(tables, channel_table.data(), channel_table.size() * sizeof(Channel),
                            cudaMemcpyHostToDevice));
  TCA_CUDA_CHECK(cudaMemcpy(tables + channel_bytes, instructions.data(),
                            instructions.size() * sizeof(Instruction), cudaMemcpyHostToDevice));
  TCA_CUDA_CHECK(cudaMemcpy(tables + channel_bytes + instruction_bytes, segments.data(),
                            segments.size() * sizeof(Segment), cudaMemcpyHostToDevice));
  unsigned char* counters = tables + channel_bytes + instruction_bytes + segment_bytes;
  TCA_CUDA_CHECK(cudaMemset(counters, 0, counter_bytes));
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
  TCA_CUDA_CHECK(cudaMemcpy(program_.ptr, &program, sizeof(Program), cudaMemcpyHostToDevice));
  program_host_ = program;

  // Host-called iterations follow the legacy default stream (a blocking stream).
  TCA_CUDA_CHECK(cudaStreamCreate(&stream_));
  TCA_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  if (buffers.resident_idle_us != 0 && channels_ == 1) {
    TCA_CUDA_CHECK(
        cudaHostAlloc(reinterpret_cast<void**>(&bell_.ptr), sizeof(Doorbell), cudaHostAllocMapped));
    std::memset(bell_.ptr, 0, sizeof(Doorbell));
    TCA_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&bell_device_), bell_.ptr, 0));
    resident_idle_ns_ = uint64_t{buffers.resident_idle_us} * 1000u;
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
    engine->release();  // what it had allocated of tca's memory (the scratch, a registration)
    return append_frame(built, __FILE__, __LINE__);
  }
  *out = std::move(engine);
  return TCA_SUCCESS;
}

}  // namespace tca::coll
