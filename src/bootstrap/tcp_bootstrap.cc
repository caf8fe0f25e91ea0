// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The tcp bootstrap's exchanges: rounds through rank 0, which checks that every rank called the
// same exchange (kind, number, size), and tells every rank why where one did not, died or did not
// come before the timeout.
#include "bootstrap/tcp_bootstrap.h"

#include <poll.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/log.h"

namespace tca {
namespace {

constexpr uint64_t kMaxReasonBytes = 4096;
constexpr int64_t kRankGraceMs = 500;

// The bytes rank `rank` sends with its frame in a round like `frame`.
uint64_t part_bytes(const Frame& frame, int rank) {
  switch (frame.op) {
    case TcpOp::kAllgather:
      return frame.bytes;
    case TcpOp::kBroadcast:
      return rank == frame.root ? frame.bytes : 0;
    default:
      return 0;
  }
}

// The bytes every rank receives back.
uint64_t result_size(const Frame& frame, int size) {
  switch (frame.op) {
    case TcpOp::kAllgather:
      return frame.bytes * static_cast<uint64_t>(size);
    case TcpOp::kBroadcast:
      return frame.bytes;
    default:
      return 0;
  }
}

std::string describe(const Frame& frame) {
  if (frame.op == TcpOp::kBroadcast)
    return fmt::format("broadcast #{} of {} bytes from rank {}", frame.sequence, frame.bytes,
                       frame.root);
  return fmt::format("{} #{} of {} bytes", tcp_op_name(frame.op), frame.sequence, frame.bytes);
}

bool same_call(const Frame& a, const Frame& b) {
  return a.magic == b.magic && a.op == b.op && a.sequence == b.sequence && a.bytes == b.bytes &&
         (a.op != TcpOp::kBroadcast || a.root == b.root);
}

}  // namespace

tcaResult TcpBootstrap::allgather(const void* mine, void* all, size_t bytes) {
  Frame frame;
  frame.op = TcpOp::kAllgather;
  frame.bytes = bytes;
  return round(frame, mine, all, bytes * static_cast<size_t>(size_));
}

tcaResult TcpBootstrap::broadcast(void* data, size_t bytes, int root) {
  if (root < 0 || root >= size_)
    TCA_FAIL(TCA_ERROR_INVALID_RANK, "broadcast from rank {} outside [0, {})", root, size_);
  Frame frame;
  frame.op = TcpOp::kBroadcast;
  frame.root = root;
  frame.bytes = bytes;
  return round(frame, data, data, bytes);
}

tcaResult TcpBootstrap::barrier() {
  Frame frame;
  frame.op = TcpOp::kBarrier;
  return round(frame, nullptr, nullptr, 0);
}

tcaResult TcpBootstrap::round(const Frame& mine, const void* part, void* result,
                              size_t result_bytes) {
  if (!broken_.empty())
    TCA_FAIL(TCA_ERROR_PEER_FAILED, "the tcp bootstrap failed earlier: {}", broken_);
  Frame frame = mine;
  frame.sequence = ++sequence_;
  if (size_ == 1) {
    if (result_bytes > 0 && result != part) std::memmove(result, part, result_bytes);
    return TCA_SUCCESS;
  }
  return rank_ == 0 ? root_round(frame, part, result, result_bytes)
                    : rank_round(frame, part, result, result_bytes);
}

tcaResult TcpBootstrap::rank_round(const Frame& mine, const void* part, void* result,
                                   size_t result_bytes) {
  const tcaResult result_of_round = rank_round_once(mine, part, result, result_bytes);
  // A round cut short leaves the stream at an unknown place: no later round may read it.
  if (result_of_round != TCA_SUCCESS && broken_.empty()) broken_ = last_error_message();
  return result_of_round;
}

tcaResult TcpBootstrap::rank_round_once(const Frame& mine, const void* part, void* result,
                                        size_t result_bytes) {
  // Rank 0 enforces the timeout and says why a round failed; the others wait a little longer,
  // so that they hear it rather than time out at the same moment.
  const Deadline deadline = deadline_after_ms(int64_t{timeout_ms_} + kRankGraceMs);
  const char* root = "rank 0 (the tcp bootstrap's root)";
  TCA_CHECK(root_.send_all(&mine, sizeof mine, deadline, root));
  TCA_CHECK(root_.send_all(part, part_bytes(mine, rank_), deadline, root));
  Frame reply;
  TCA_CHECK(root_.recv_all(&reply, sizeof reply, deadline, root));
  if (reply.magic == kTcpMagic && reply.op == TcpOp::kFail && reply.bytes <= kMaxReasonBytes) {
    std::string reason(reply.bytes, '\0');
    TCA_CHECK(root_.recv_all(reason.data(), reason.size(), deadline, root));
    broken_ = reason;
    TCA_FAIL(static_cast<tcaResult>(reply.root), "{}", reason);
  }
  if (!same_call(reply, mine))
    TCA_FAIL(TCA_ERROR_INTERNAL, "rank 0 answered {} with {}", describe(mine), describe(reply));
  return root_.recv_all(result, result_bytes, deadline, root);
}

tcaResult TcpBootstrap::root_round(const Frame& mine, const void* part, void* result,
                                   size_t result_bytes) {
  const Deadline deadline = deadline_after_ms(timeout_ms_);
  std::vector<uint8_t> parts;
  TCA_CHECK(receive_parts(mine, part, &parts, deadline));
  for (int rank = 1; rank < size_; ++rank) {
    const std::string what = fmt::format("rank {}", rank);
    const tcaResult sent = ranks_[rank].send_all(&mine, sizeof mine, deadline, what.c_str());
    if (sent != TCA_SUCCESS ||
        ranks_[rank].send_all(parts.data(), parts.size(), deadline, what.c_str()) != TCA_SUCCESS)
      return fail_everyone(TCA_ERROR_PEER_FAILED,
                           fmt::format("rank {} is gone: {}", rank, last_error_message()));
  }
  if (result_bytes > 0) std::memcpy(result, parts.data(), result_bytes);
  return TCA_SUCCESS;
}

// Every other rank's frame and part, as they come; the first disagreement, death or the
// timeout ends the round for every rank.
tcaResult TcpBootstrap::receive_parts(const Frame& mine, const void* part,
                                      std::vector<uint8_t>* parts, Deadline deadline) {
  parts->assign(result_size(mine, size_), 0);
  if (part_bytes(mine, 0) > 0) std::memcpy(parts->data(), part, part_bytes(mine, 0));
  std::vector<int> pending;
  for (int rank = 1; rank < size_; ++rank) pending.push_back(rank);
  while (!pending.empty()) {
    std::vector<pollfd> waiting;
    for (int rank : pending) waiting.push_back({ranks_[rank].fd(), POLLIN, 0});
    const int ready = poll(waiting.data(), waiting.size(), poll_slice_ms(deadline));
    if (ready == 0 && std::chrono::steady_clock::now() >= deadline) {
      std::string names;
      for (int rank : pending) names += (names.empty() ? "" : ", ") + std::to_string(rank);
      return fail_everyone(TCA_ERROR_TIMEOUT,
                           fmt::format("rank(s) {} did not come to {} within {} ms "
                                       "(TCA_TIMEOUT_MS)",
                                       names, describe(mine), timeout_ms_));
    }
    std::vector<int> still;
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (waiting[i].revents == 0) {
        still.push_back(pending[i]);
        continue;
      }
      TCA_CHECK(receive_part(pending[i], mine, parts, deadline));
    }
    pending = std::move(still);
  }
  return TCA_SUCCESS;
}

tcaResult TcpBootstrap::receive_part(int rank, const Frame& mine, std::vector<uint8_t>* parts,
                                     Deadline deadline) {
  const std::string what = fmt::format("rank {}", rank);
  Frame frame;
  if (ranks_[rank].recv_all(&frame, sizeof frame, deadline, what.c_str()) != TCA_SUCCESS)
    return fail_everyone(TCA_ERROR_PEER_FAILED, fmt::format("rank {} is gone during {}: {}", rank,
                                                            describe(mine), last_error_message()));
  if (!same_call(frame, mine))
    return fail_everyone(TCA_ERROR_INVALID_ARGUMENT,
                         fmt::format("the ranks disagree: rank {} called {}, rank 0 {}", rank,
                                     describe(frame), describe(mine)));
  const uint64_t bytes = part_bytes(mine, rank);
  uint8_t* into = parts->data() + (mine.op == TcpOp::kAllgather ? rank * mine.bytes : 0);
  if (ranks_[rank].recv_all(into, bytes, deadline, what.c_str()) != TCA_SUCCESS)
    return fail_everyone(TCA_ERROR_PEER_FAILED,
                         fmt::format("rank {} is gone: {}", rank, last_error_message()));
  return TCA_SUCCESS;
}

tcaResult TcpBootstrap::fail_everyone(tcaResult code, const std::string& reason) {
  broken_ = reason;
  Frame frame;
  frame.op = TcpOp::kFail;
  frame.root = code;
  frame.bytes = std::min<uint64_t>(reason.size(), kMaxReasonBytes);
  const Deadline deadline = deadline_after_ms(1000);
  for (size_t rank = 1; rank < ranks_.size(); ++rank) {
    if (!ranks_[rank].valid()) continue;
    if (ranks_[rank].send_all(&frame, sizeof frame, deadline, "a rank") == TCA_SUCCESS)
      ranks_[rank].send_all(reason.data(), frame.bytes, deadline, "a rank");
  }
  TCA_FAIL(code, "{}", reason);
}

}  // namespace tca
