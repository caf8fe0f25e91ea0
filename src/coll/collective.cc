// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll/collective.h"

#include <algorithm>

#include "base/settings.h"
#include "base/trace.h"
#include "coll/status.h"
#include "core/observe/observe.h"

using tca::coll::Action;
using tca::coll::Buffer;
using tca::coll::Op;
using tca::coll::OpKind;
using tca::coll::Place;
using tca::coll::Schedule;

namespace {

constexpr int kCreditSlot = TCA_COLL_FIRST_SLOT;
constexpr unsigned kMaxResidentIdleUs = 1000000;  // tcaCollConfig.resident_idle_us
constexpr int kFirstDataSlot = TCA_COLL_FIRST_SLOT + 1;
constexpr int kDataSlots = TCA_TEAM_SLOT - kFirstDataSlot;  // the last slot is the teams'
static_assert(kDataSlots > 0, "collectives need a data slot");

// Steps beyond kDataSlots share slots: notifications of one (sender, slot) pair are counted,
// so a wait consumes them in the order they were raised.
int data_slot(int step) { return kFirstDataSlot + step % kDataSlots; }

// The collective between tcaCollStart and the end of its iteration: slots are shared by all
// collectives, so only one may be in flight.
const tcaColl_st* g_in_flight = nullptr;

bool touches_scratch(const Op& op) {
  return std::any_of(op.pieces.begin(), op.pieces.end(), [](const tca::coll::Piece& piece) {
    return piece.dst.buffer == Buffer::kScratch || piece.src.buffer == Buffer::kScratch;
  });
}

bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

// tcaCollConfig.resident_idle_us as the GPU engine takes it: 0 there stands for the setting
// TCA_COLL_RESIDENT_US, TCA_COLL_RESIDENT_OFF for none.
[[maybe_unused]] tcaResult resident_idle_us(const tcaCollConfig& config, unsigned* out) {
  *out = 0;
  if (config.resident_idle_us == TCA_COLL_RESIDENT_OFF) return TCA_SUCCESS;
  if (config.resident_idle_us != 0) {
    *out = config.resident_idle_us;
    return TCA_SUCCESS;
  }
  int64_t idle = 0;
  TCA_CHECK(tca::setting_count("TCA_COLL_RESIDENT_US", &idle));
  *out = static_cast<unsigned>(idle);
  return TCA_SUCCESS;
}

}  // namespace

namespace tca::coll {

tcaResult check_arguments(tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
                          const void* sendbuf, const void* recvbuf, const tcaCollConfig& config,
                          int rank, int ranks, bool* in_place) {
  if (kind != TCA_COLL_ALLGATHER && kind != TCA_COLL_ALLREDUCE)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown collective kind {}", static_cast<int>(kind));
  const size_t element = tcaDataTypeSize(type);
  if (element == 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown data type {}", static_cast<int>(type));
  if (kind == TCA_COLL_ALLREDUCE && op != TCA_SUM && op != TCA_MAX && op != TCA_MIN)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown reduction {}", static_cast<int>(op));
  if (config.algorithm < TCA_COLL_AUTO || config.algorithm >= TCA_COLL_ALGORITHMS)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown algorithm {}",
             static_cast<int>(config.algorithm));
  if (config.memory != TCA_MEM_CPU && config.memory != TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown memory kind {}", static_cast<int>(config.memory));
  if (config.resident_idle_us > kMaxResidentIdleUs &&
      config.resident_idle_us != TCA_COLL_RESIDENT_OFF)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "resident_idle_us {} is above {}", config.resident_idle_us,
             kMaxResidentIdleUs);
  if (config.resident_idle_us != 0 && config.resident_idle_us != TCA_COLL_RESIDENT_OFF &&
      config.memory != TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "resident_idle_us applies to GPU memory (config.memory = TCA_MEM_GPU) only");
  *in_place = false;
  if (count == 0) return TCA_SUCCESS;
  if (sendbuf == nullptr || recvbuf == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "sendbuf or recvbuf is NULL");
  const size_t blocks = kind == TCA_COLL_ALLGATHER ? static_cast<size_t>(ranks) : 1;
  if (count > SIZE_MAX / element / blocks)
    TCA_FAIL(TCA_ERROR_SIZE_OVERFLOW, "{} elements of {} bytes times {} ranks overflow", count,
             element, blocks);
  const size_t send_bytes = count * element;
  const void* in_place_send = kind == TCA_COLL_ALLGATHER
                                  ? static_cast<const unsigned char*>(recvbuf) + rank * send_bytes
                                  : recvbuf;
  *in_place = sendbuf == in_place_send;
  if (!*in_place && overlaps(sendbuf, send_bytes, recvbuf, blocks * send_bytes))
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "sendbuf {} overlaps recvbuf {} without being the in-place position {}", sendbuf,
             recvbuf, in_place_send);
  return TCA_SUCCESS;
}

// Whether CUDA IPC reaches every rank from this one (then a GPU program runs the collective).
// Where it does not, every rank finds some rank out of reach too (hosts are symmetric), so all
// choose the host-run schedule together.
tcaResult gpu_ipc_everywhere(const TeamView& team, bool* everywhere) {
  *everywhere = true;
  for (int peer = 0; peer < team.size() && *everywhere; ++peer) {
    int available = 0;
    TCA_CHECK(tcaPathAvailable(TCA_PATH_CUDA, team.world_rank(peer), &available));
    *everywhere = available != 0;
  }
  return TCA_SUCCESS;
}

}  // namespace tca::coll

tcaResult tcaColl_st::create(tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
                             const void* sendbuf, void* recvbuf, const tcaCollConfig& config,
                             std::unique_ptr<tcaColl_st>* out) {
  std::unique_ptr<tcaColl_st> coll(new tcaColl_st());
  // Collectives on the world make the teams' control exchange, so that survivors of a failure
  // can shrink the world later without the bootstrap.
  if (config.team == TCA_TEAM_WORLD) TCA_CHECK(tca::coll::ensure_control());
  TCA_CHECK(tca::coll::team_view(config.team, &coll->team_));
  coll->rank_ = coll->team_.me;
  coll->ranks_ = coll->team_.size();
  TCA_CHECK(tca::coll::check_arguments(kind, type, op, count, sendbuf, recvbuf, config, coll->rank_,
                                       coll->ranks_, &coll->in_place_));
  tca::coll::Shape shape;
  shape.kind = kind;
  shape.ranks = coll->ranks_;
  shape.count = count;
  shape.element_bytes = tcaDataTypeSize(type);
  coll->send_bytes_ = count * shape.element_bytes;
  coll->recv_bytes_ = coll->send_bytes_ * (kind == TCA_COLL_ALLGATHER ? coll->ranks_ : 1);
  TCA_CHECK(tca::coll::resolve_algorithm(kind, config.memory, coll->recv_bytes_, coll->ranks_,
                                         config.algorithm, &shape.algorithm));
  TCA_CHECK(
      tca::coll::map_positions(shape.algorithm, &config.topology, coll->ranks_, &shape.rank_at));
  coll->algorithm_ = shape.algorithm;
  coll->memory_ = config.memory;
  coll->sendbuf_ = sendbuf;
  coll->recvbuf_ = recvbuf;
  if (config.memory == TCA_MEM_GPU)
    TCA_CHECK(tca::coll::gpu_ipc_everywhere(coll->team_, &coll->host_scheduled_));
  coll->host_scheduled_ = config.memory == TCA_MEM_GPU && !coll->host_scheduled_;
  if (config.memory == TCA_MEM_GPU && !coll->host_scheduled_) {
#if TCA_HAVE_CUDA
    if (count > 0) {
      tca::coll::DeviceBuffers buffers;
      buffers.type = type;
      buffers.op = op;
      buffers.send = sendbuf;
      buffers.recv = recvbuf;
      buffers.recv_bytes = coll->recv_bytes_;
      TCA_CHECK(resident_idle_us(config, &buffers.resident_idle_us));
      buffers.team = config.team;
      TCA_CHECK(tca::coll::make_device_engine(shape, buffers, &coll->device_));
    }
    *out = std::move(coll);
    return TCA_SUCCESS;
#else
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "collectives on GPU memory need a CUDA build of tca");
#endif
  }
  TCA_CHECK(tca::coll::make_local_ops(config.memory, type, op, &coll->local_));
  int world_ranks = 1;
  TCA_CHECK(tcaSize(&world_ranks));
  TCA_CHECK(tca::coll::NotificationWaiter::create(coll->team_.world_rank(coll->rank_), world_ranks,
                                                  &coll->waiter_));
  if (count == 0) {  // nothing to move: every iteration is empty
    *out = std::move(coll);
    return TCA_SUCCESS;
  }

  const Schedule schedule = tca::coll::build_schedule(shape, coll->rank_);
  // Who writes into this rank's receive buffer before knowing that it has started: they wait
  // for its credit, which it posts at every start.
  std::vector<int> writers_to_me;
  for (int writer = 0; writer < coll->ranks_; ++writer) {
    if (writer == coll->rank_) continue;
    const Schedule theirs = tca::coll::build_schedule(shape, writer);
    if (std::any_of(theirs.ops.begin(), theirs.ops.end(), [&](const Op& their) {
          return their.kind == OpKind::kSend && their.needs_credit && their.peer == coll->rank_;
        }))
      writers_to_me.push_back(writer);
  }
  tcaResult result = coll->register_buffers(schedule);
  if (result == TCA_SUCCESS) result = coll->build_iterations(schedule, writers_to_me);
  if (result != TCA_SUCCESS) {
    {
      const tca::ErrorKeeper keep;  // the failure's message, not the clean-up's
      coll->release();
    }
    return tca::append_frame(result, __FILE__, __LINE__);
  }
  *out = std::move(coll);
  return TCA_SUCCESS;
}

tcaResult tcaColl_st::register_buffers(const Schedule& schedule) {
  // A member whose own part failed still tells the others, who would wait for its handles.
  TCA_CHECK(tca::coll::team_agree(team_, register_own(schedule)));
  if (ranks_ == 1) return TCA_SUCCESS;  // nobody to tell
  peer_recv_.resize(ranks_);
  TCA_CHECK(tca::coll::team_allgather_handles(team_, &recv_handle_, peer_recv_.data()));
  if (scratch_bytes_ > 0) {
    peer_scratch_.resize(ranks_);
    TCA_CHECK(tca::coll::team_allgather_handles(team_, &scratch_handle_, peer_scratch_.data()));
  }
  return TCA_SUCCESS;
}

tcaResult tcaColl_st::register_own(const Schedule& schedule) {
  // The receive buffer is always registered: it also tells whether the object still belongs
  // to the running job (belongs_to_current_job).
  TCA_CHECK(tcaCreateHandle(&recv_handle_, recvbuf_, recv_bytes_, memory_));
  recv_registered_ = true;
  const bool send_is_a_source =
      std::any_of(schedule.ops.begin(), schedule.ops.end(), [](const Op& op) {
        return std::any_of(op.pieces.begin(), op.pieces.end(), [](const tca::coll::Piece& piece) {
          return piece.src.buffer == Buffer::kSend;
        });
      });
  if (send_is_a_source && !in_place_) {
    TCA_CHECK(tcaCreateHandle(&send_handle_, const_cast<void*>(sendbuf_), send_bytes_, memory_));
    send_registered_ = true;
  }
  scratch_bytes_ = schedule.scratch_bytes;  // the same on every rank
  if (scratch_bytes_ > 0) {
    void* scratch = nullptr;
    TCA_CHECK(tcaMalloc(&scratch, 2 * scratch_bytes_, memory_));
    scratch_ = static_cast<unsigned char*>(scratch);
    TCA_CHECK(tcaCreateHandle(&scratch_handle_, scratch_, 2 * scratch_bytes_, memory_));
  }
  return TCA_SUCCESS;
}

void* tcaColl_st::address(const Place& place, int parity) const {
  switch (place.buffer) {
    case Buffer::kSend:
      return const_cast<unsigned char*>(static_cast<const unsigned char*>(sendbuf_)) + place.offset;
    case Buffer::kRecv:
      return static_cast<unsigned char*>(recvbuf_) + place.offset;
    case Buffer::kScratch:
      return scratch_ + parity * scratch_bytes_ + place.offset;
  }
  return nullptr;
}

tcaResult tcaColl_st::chain_for(const Op& op, int parity, tcaDesc* out) {
  tcaDesc desc = nullptr;
  TCA_CHECK(tcaDescNew(&desc));
  chains_.push_back(desc);  // freed by release() whatever happens next
  const size_t scratch_shift = static_cast<size_t>(parity) * scratch_bytes_;
  // In place, the send buffer is a part of the receive buffer.
  const size_t send_in_recv = in_place_ ? static_cast<const unsigned char*>(sendbuf_) -
                                              static_cast<const unsigned char*>(recvbuf_)
                                        : 0;
  for (size_t i = 0; i < op.pieces.size(); ++i) {
    const tca::coll::Piece& piece = op.pieces[i];
    const bool into_scratch = piece.dst.buffer == Buffer::kScratch;
    const tcaHandle& dst = into_scratch ? peer_scratch_[op.peer] : peer_recv_[op.peer];
    const size_t dst_offset = piece.dst.offset + (into_scratch ? scratch_shift : 0);
    const tcaHandle* src = &recv_handle_;
    size_t src_offset = piece.src.offset;
    if (piece.src.buffer == Buffer::kScratch) {
      src = &scratch_handle_;
      src_offset += scratch_shift;
    } else if (piece.src.buffer == Buffer::kSend) {
      src = in_place_ ? &recv_handle_ : &send_handle_;
      src_offset += send_in_recv;
    }
    // One notification per chain: it covers every piece before it.
    const bool last = i + 1 == op.pieces.size();
    const unsigned flags = last ? TCA_FLAG_NOTIFY : 0u;
    const int slot = last ? data_slot(op.step) : 0;
    if (piece.count == 1)
      TCA_CHECK(
          tcaDescSetMemcpy(desc, &dst, dst_offset, src, src_offset, piece.width, flags, slot));
    else
      TCA_CHECK(tcaDescSetMemcpy2D(desc, &dst, dst_offset, piece.dst_pitch, src, src_offset,
                                   piece.src_pitch, piece.width, piece.count, flags, slot));
  }
  TCA_CHECK(tcaDescSet(desc, TCA_COLL_CHANNEL));
  *out = desc;
  return TCA_SUCCESS;
}

tcaResult tcaColl_st::build_iterations(const Schedule& schedule,
                                       const std::vector<int>& writers_to_me) {
  std::vector<tcaDesc> parity_free(schedule.ops.size(), nullptr);  // chains both parities share
  for (int parity = 0; parity < 2; ++parity) {
    std::vector<Action>& actions = iteration_[parity];
    for (int writer : writers_to_me) {
      Action credit;
      credit.kind = Action::kPostCredit;
      credit.peer = team_.world_rank(writer);  // actions name world ranks
      credit.slot = kCreditSlot;
      actions.push_back(credit);
    }
    std::vector<bool> credited(ranks_, false);
    bool undrained = false;  // chains kicked since the channel was last drained
    for (size_t i = 0; i < schedule.ops.size(); ++i) {
      const Op& op = schedule.ops[i];
      Action action;
      // Actions name world ranks (local steps have no peer).
      action.peer = op.peer >= 0 && op.peer < ranks_ ? team_.world_rank(op.peer) : op.peer;
      switch (op.kind) {
        case OpKind::kSend:
          if (op.needs_credit && !credited[op.peer]) {
            credited[op.peer] = true;
            Action credit;
            credit.kind = Action::kAwaitCredit;
            credit.peer = team_.world_rank(op.peer);
            credit.slot = kCreditSlot;
            actions.push_back(credit);
          }
          action.slot = data_slot(op.step);
          if (op.pieces.empty()) {
            action.kind = Action::kNotify;
          } else {
            action.kind = Action::kKick;
            if (parity == 0 || touches_scratch(op)) TCA_CHECK(chain_for(op, parity, &action.desc));
            if (parity == 0) parity_free[i] = action.desc;
            if (!touches_scratch(op)) action.desc = parity_free[i];
            undrained = true;
          }
          break;
        case OpKind::kAwait:
          action.kind = Action::kAwait;
          action.slot = data_slot(op.step);
          break;
        case OpKind::kReduce:
        case OpKind::kCopy:
          action.kind = op.kind == OpKind::kReduce ? Action::kReduce : Action::kCopy;
          action.dst = address(op.dst, parity);
          action.a = address(op.a, parity);
          action.b = op.kind == OpKind::kReduce ? address(op.b, parity) : nullptr;
          action.length = op.length;
          if (action.kind == Action::kCopy && action.dst == action.a) continue;  // in place
          // A kicked chain may still read what this writes (transports that complete later).
          if (undrained) {
            Action drain;
            drain.kind = Action::kDrain;
            actions.push_back(drain);
            undrained = false;
          }
          break;
      }
      actions.push_back(action);
    }
    // Sources are reusable and outgoing data delivered before the iteration ends.
    if (undrained) {
      Action drain;
      drain.kind = Action::kDrain;
      actions.push_back(drain);
    }
  }
  return TCA_SUCCESS;
}

tcaColl_st::DeviceTraceFields tcaColl_st::device_trace_fields() const {
  return {recv_bytes_ == send_bytes_ ? "allreduce" : "allgather",
          tcaCollAlgorithmName(algorithm_),
          recv_bytes_,
          ranks_,
          device_->inline_protocol() ? "ll" : "simple",
          device_->channels()};
}

tcaResult tcaColl_st::start() {
  if (failed_)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "an earlier iteration of this collective failed; free it and make a new one");
  if (running_)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "the collective is running: tcaCollWait first");
  const bool device_program = memory_ == TCA_MEM_GPU && !host_scheduled_;
  const uint64_t traced_at = tca::trace::enabled() ? tca::trace::now_ns() : 0;
  // Host steps: the kicks, notifications and waits that follow. A GPU program's iteration is
  // recorded once started (how the host started it is known then), at the call's start.
  if (tca::trace::enabled() && (!device_program || device_ == nullptr))
    tca::trace::collective_begin(recv_bytes_ == send_bytes_ ? "allreduce" : "allgather",
                                 tcaCollAlgorithmName(algorithm_), recv_bytes_, ranks_, memory_,
                                 !device_program ? "host" : "none");
  if (tca::observe::on())
    tca::observe::collective_begin(recv_bytes_ == send_bytes_ ? "allreduce" : "allgather",
                                   tcaCollAlgorithmName(algorithm_), recv_bytes_);
  if (device_program) {  // GPU programs have their own signals
    if (device_ != nullptr) TCA_CHECK(finish_or_fail(device_->start()));
    if (device_ != nullptr && tca::trace::enabled()) {
      const DeviceTraceFields f = device_trace_fields();
      tca::trace::device_collective_begin(traced_at, f.op, f.algorithm, f.bytes, f.ranks,
                                          f.protocol, f.channels, device_->call_form());
    }
    running_ = true;
    return TCA_SUCCESS;
  }
  if (g_in_flight != nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "another collective ({}) is in flight: wait for it before starting this one",
             static_cast<const void*>(g_in_flight));
  running_ = true;
  g_in_flight = this;
  next_action_ = 0;
  ++started_;
  bool done = false;
  return finish_or_fail(advance(false, &done));
}

tcaResult tcaColl_st::progress(bool block, bool* done) {
  if (!running_) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "the collective is not started");
  if (memory_ == TCA_MEM_GPU && !host_scheduled_) {
    *done = true;  // zero elements: nothing ran
    if (device_ != nullptr)
      TCA_CHECK(finish_or_fail(block ? device_->wait() : device_->test(done)));
    if (*done) running_ = false;
    if (*done && tca::trace::enabled()) tca::trace::collective_end();
    if (*done && tca::observe::on()) tca::observe::collective_end();
    return TCA_SUCCESS;
  }
  TCA_CHECK(finish_or_fail(advance(block, done)));
  if (*done) {
    running_ = false;
    g_in_flight = nullptr;
    if (tca::trace::enabled()) tca::trace::collective_end();
    if (tca::observe::on()) tca::observe::collective_end();
  }
  return TCA_SUCCESS;
}

tcaResult tcaColl_st::advance(bool block, bool* done) {
  const std::vector<Action>& actions = iteration_[(started_ - 1) % 2];
  *done = false;
  for (; next_action_ < actions.size(); ++next_action_) {
    tca::observe::collective_step(next_action_);
    const Action& action = actions[next_action_];
    switch (action.kind) {
      case Action::kPostCredit:
      case Action::kNotify:
        TCA_CHECK(tcaNotify(action.peer, action.slot));
        break;
      case Action::kAwaitCredit:
      case Action::kAwait:
        if (block) {
          TCA_CHECK(waiter_.wait(action.peer, action.slot));
        } else {
          int arrived = 0;
          TCA_CHECK(tcaTestDMARecvDesc(action.peer, action.slot, &arrived, nullptr));
          if (!arrived) return TCA_SUCCESS;
        }
        break;
      case Action::kKick:
        TCA_CHECK(tcaStartDMADesc(action.desc));
        break;
      case Action::kDrain:
        TCA_CHECK(tcaWaitDMAC(TCA_COLL_CHANNEL));
        break;
      case Action::kReduce:
        TCA_CHECK(local_->reduce(action.dst, action.a, action.b, action.length));
        break;
      case Action::kCopy:
        TCA_CHECK(local_->copy(action.dst, action.a, action.length));
        break;
    }
  }
  *done = true;
  return TCA_SUCCESS;
}

tcaResult tcaColl_st::finish_or_fail(tcaResult result) {
  if (result == TCA_SUCCESS) return TCA_SUCCESS;
  // The peers' notification counts no longer match this rank's: the object cannot run again.
  failed_ = true;
  running_ = false;
  if (g_in_flight == this) g_in_flight = nullptr;
  return result;
}

tcaResult tcaColl_st::release() {
  tcaResult first_failure = TCA_SUCCESS;
  auto keep_first = [&first_failure](tcaResult result) {
    if (first_failure == TCA_SUCCESS) first_failure = result;
  };
  if (device_ != nullptr) keep_first(device_->release());
  for (tcaDesc desc : chains_) keep_first(tcaDescFree(desc));
  chains_.clear();
  iteration_[0].clear();
  iteration_[1].clear();
  if (send_registered_) keep_first(tcaDestroyHandle(&send_handle_));
  if (recv_registered_) keep_first(tcaDestroyHandle(&recv_handle_));
  send_registered_ = recv_registered_ = false;
  if (scratch_ != nullptr) keep_first(tcaFree(scratch_));  // also deregisters its handle
  scratch_ = nullptr;
  running_ = false;
  if (g_in_flight == this) g_in_flight = nullptr;
  return first_failure;
}

bool tcaColl_st::belongs_to_current_job() const {
  if (device_ != nullptr) return device_->belongs_to_current_job();
  return recv_registered_ && tcaHandleInfo(&recv_handle_, nullptr, nullptr, nullptr) == TCA_SUCCESS;
}

tcaResult tcaColl_st::copy_local(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return TCA_SUCCESS;
  return device_ != nullptr ? device_->copy(dst, src, bytes) : local_->copy(dst, src, bytes);
}
