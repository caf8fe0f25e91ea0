// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The tcp bootstrap's messages. Ranks 1..N-1 each keep one connection to rank 0 (the root): a
// one-level tree, N-1 connections. Joining: the root sends a Challenge, the rank answers with a
// Hello that proves it knows the job's key, the root answers with a Verdict that proves the same.
// Then every exchange is a round: each rank sends a Frame (and its part), the root checks that
// all called the same exchange, and answers each with a Frame and the result (or a kFail frame
// with the reason, which that rank's call then returns).
#pragma once

#include <cstdint>
#include <string>

namespace tca {

constexpr uint32_t kTcpMagic = 0x54434142;  // "TCAB"
constexpr uint32_t kTcpVersion = 1;
constexpr size_t kTcpNonceBytes = 16;
constexpr size_t kTcpProofBytes = 32;
constexpr size_t kTcpReasonBytes = 240;

struct Challenge {
  uint32_t magic = kTcpMagic;
  uint32_t version = kTcpVersion;
  uint8_t nonce[kTcpNonceBytes] = {};
};

struct Hello {
  uint32_t magic = kTcpMagic;
  uint32_t version = kTcpVersion;
  int32_t rank = -1;
  int32_t size = 0;
  int32_t pid = 0;
  uint32_t reserved = 0;
  uint8_t proof[kTcpProofBytes] = {};  // BLAKE2b-256 of key, nonce, "rank", rank, size
};

struct Verdict {
  uint32_t magic = kTcpMagic;
  int32_t status = 0;                  // a tcaResult; TCA_SUCCESS: joined
  uint8_t proof[kTcpProofBytes] = {};  // BLAKE2b-256 of key, nonce, "root", rank, size
  char reason[kTcpReasonBytes] = {};   // why not, where refused
};

enum class TcpOp : uint32_t { kAllgather = 1, kBroadcast = 2, kBarrier = 3, kFail = 4 };

struct Frame {
  uint32_t magic = kTcpMagic;
  TcpOp op = TcpOp::kBarrier;
  uint32_t sequence = 0;  // the exchange's number since the job started
  int32_t root = 0;       // kBroadcast: whose data; kFail: the tcaResult
  uint64_t bytes = 0;     // kAllgather: each rank's part; kBroadcast: the data; kFail: reason
};

// The proof that the sender of a Hello (role "rank") or a Verdict (role "root") knows `key`.
void tcp_proof(const std::string& key, const uint8_t* nonce, const char* role, int rank, int size,
               uint8_t* out);

const char* tcp_op_name(TcpOp op);

}  // namespace tca
