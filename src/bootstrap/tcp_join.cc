// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Joining the tcp bootstrap's job: rank 0 listens at the root's port and admits each other rank
// once it proves it knows the job's key; a connection that cannot (another job's, a stray one),
// a rank number taken twice or a size unlike the root's is refused with the reason and does not
// disturb the job. Nothing waits past the timeout: rank 0 then names the ranks that never came.
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/blake2b.h"
#include "base/error.h"
#include "base/log.h"
#include "bootstrap/tcp_bootstrap.h"

namespace tca {
namespace {

// A refused connection's handshake gets at most this long, so a silent one cannot hold rank 0.
constexpr int64_t kHandshakeMs = 5000;

Deadline earlier(Deadline a, Deadline b) { return std::min(a, b); }

void copy_reason(const std::string& reason, Verdict* verdict) {
  std::strncpy(verdict->reason, reason.c_str(), sizeof verdict->reason - 1);
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

}  // namespace

void tcp_proof(const std::string& key, const uint8_t* nonce, const char* role, int rank, int size,
               uint8_t* out) {
  std::string message = key;
  message.append(reinterpret_cast<const char*>(nonce), kTcpNonceBytes);
  message += fmt::format("/{}/{}/{}", role, rank, size);
  blake2b(message.data(), message.size(), out, kTcpProofBytes);
}

const char* tcp_op_name(TcpOp op) {
  switch (op) {
    case TcpOp::kAllgather:
      return "allgather";
    case TcpOp::kBroadcast:
      return "broadcast";
    case TcpOp::kBarrier:
      return "barrier";
    case TcpOp::kFail:
      return "failure";
  }
  return "unknown exchange";
}

TcpBootstrap::TcpBootstrap(const TcpEnvironment& environment, int timeout_ms)
    : environment_(environment),
      rank_(environment.rank),
      size_(environment.size),
      timeout_ms_(timeout_ms) {}

tcaResult TcpBootstrap::create(const TcpEnvironment& environment, int timeout_ms,
                               std::unique_ptr<Bootstrap>* out) {
  std::unique_ptr<TcpBootstrap> made(new TcpBootstrap(environment, timeout_ms));
  if (made->size_ > 1) TCA_CHECK(made->rank_ == 0 ? made->join_as_root() : made->join_as_rank());
  *out = std::move(made);
  return TCA_SUCCESS;
}

tcaResult TcpBootstrap::join_as_root() {
  const Deadline started = deadline_after_ms(0);
  const Deadline deadline = deadline_after_ms(timeout_ms_);
  Socket listener;
  uint16_t bound = 0;
  TCA_CHECK(listen_on(environment_.local_host, environment_.root.port, &listener, &bound));
  ranks_.resize(size_);
  pids_.assign(size_, 0);
  int joined = 1;
  while (joined < size_) {
    Socket connection;
    TCA_CHECK(accept_before(listener, deadline, &connection));
    if (!connection.valid()) {
      if (deadline_after_ms(0) >= deadline) return refuse_missing(started);
      continue;
    }
    const tcaResult admitted = admit(std::move(connection), deadline);
    if (admitted == TCA_SUCCESS) ++joined;
  }
  TCA_INFO("tcp bootstrap: {} ranks joined at port {} in {:.1f} ms", size_, bound,
           std::chrono::duration<double, std::milli>(deadline_after_ms(0) - started).count());
  return TCA_SUCCESS;
}

// Checks one connection's Hello; a refused one is told why, logged and closed (an error
// returned here only means "not admitted").
tcaResult TcpBootstrap::admit(Socket connection, Deadline deadline) {
  const Deadline handshake = earlier(deadline, deadline_after_ms(kHandshakeMs));
  Challenge challenge;
  if (getrandom(challenge.nonce, sizeof challenge.nonce, 0) != sizeof challenge.nonce)
    TCA_FAIL(TCA_ERROR_TRANSPORT, "getrandom: {}", std::strerror(errno));
  Hello hello;
  TCA_CHECK(connection.send_all(&challenge, sizeof challenge, handshake, "a joining connection"));
  TCA_CHECK(connection.recv_all(&hello, sizeof hello, handshake, "a joining connection"));
  uint8_t expected[kTcpProofBytes];
  tcp_proof(environment_.key, challenge.nonce, "rank", hello.rank, hello.size, expected);
  Verdict verdict;
  std::string refusal;
  if (hello.magic != kTcpMagic || hello.version != kTcpVersion)
    refusal = "not a tca rank of this version";
  else if (std::memcmp(expected, hello.proof, sizeof expected) != 0)
    refusal =
        "its proof does not match this job's key (another job's rank, or TCA_JOB_KEY "
        "differs)";
  else if (hello.size != size_)
    refusal = fmt::format("it says the job has {} ranks, rank 0 says {}", hello.size, size_);
  else if (hello.rank <= 0 || hello.rank >= size_)
    refusal = fmt::format("rank {} is outside [1, {})", hello.rank, size_);
  else if (ranks_[hello.rank].valid())
    refusal = fmt::format("rank {} has already joined (pid {})", hello.rank, pids_[hello.rank]);
  verdict.status = refusal.empty() ? TCA_SUCCESS : TCA_ERROR_INVALID_ARGUMENT;
  if (refusal.empty())
    tcp_proof(environment_.key, challenge.nonce, "root", hello.rank, hello.size, verdict.proof);
  copy_reason(refusal, &verdict);
  TCA_CHECK(connection.send_all(&verdict, sizeof verdict, handshake, "a joining connection"));
  if (!refusal.empty()) {
    TCA_WARN("tcp bootstrap: refused a connection (pid {}): {}", hello.pid, refusal);
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "refused: {}", refusal);
  }
  pids_[hello.rank] = hello.pid;
  ranks_[hello.rank] = std::move(connection);
  return TCA_SUCCESS;
}

// The timeout passed with ranks missing: the ones that came are told, and so is the caller.
tcaResult TcpBootstrap::refuse_missing(Deadline started) {
  std::vector<int> missing;
  for (int rank = 1; rank < size_; ++rank)
    if (!ranks_[rank].valid()) missing.push_back(rank);
  const double waited = std::chrono::duration<double>(deadline_after_ms(0) - started).count();
  return fail_everyone(TCA_ERROR_TIMEOUT,
                       fmt::format("rank(s) {} of {} never joined rank 0 at {} within {:.1f} s "
                                   "(TCA_TIMEOUT_MS)",
                                   rank_list(missing), size_, environment_.root.text(), waited));
}

tcaResult TcpBootstrap::join_as_rank() {
  const Deadline deadline = deadline_after_ms(timeout_ms_);
  const std::string root = "rank 0 at " + environment_.root.text();
  TCA_CHECK(connect_with_retries(environment_.root, environment_.local_host, deadline, &root_));
  Challenge challenge;
  TCA_CHECK(root_.recv_all(&challenge, sizeof challenge, deadline, root.c_str()));
  if (challenge.magic != kTcpMagic || challenge.version != kTcpVersion)
    TCA_FAIL(TCA_ERROR_TRANSPORT, "{} is not a tca root of this version", root);
  Hello hello;
  hello.rank = rank_;
  hello.size = size_;
  hello.pid = static_cast<int32_t>(getpid());
  tcp_proof(environment_.key, challenge.nonce, "rank", rank_, size_, hello.proof);
  TCA_CHECK(root_.send_all(&hello, sizeof hello, deadline, root.c_str()));
  Verdict verdict;
  TCA_CHECK(root_.recv_all(&verdict, sizeof verdict, deadline, root.c_str()));
  verdict.reason[sizeof verdict.reason - 1] = '\0';
  if (verdict.status != TCA_SUCCESS)
    TCA_FAIL(static_cast<tcaResult>(verdict.status), "rank {} was refused by {}: {}", rank_, root,
             verdict.reason);
  uint8_t expected[kTcpProofBytes];
  tcp_proof(environment_.key, challenge.nonce, "root", rank_, size_, expected);
  if (std::memcmp(expected, verdict.proof, sizeof expected) != 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "{} does not know this job's key (another job's root on that port?)", root);
  return TCA_SUCCESS;
}

}  // namespace tca
