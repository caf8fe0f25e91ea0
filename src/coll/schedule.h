// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The schedule of a collective as one rank runs it: what goes to whom in which step, what to
// wait for and what to reduce. It names buffers and offsets, not addresses or handles, so the
// same schedule serves both iteration parities and every memory kind (collective.cc turns it
// into chains and local operations).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tca/tca_coll.h"

namespace tca::coll {

enum class Buffer : uint8_t {
  kSend,    // the user's send buffer (the receive buffer when in place)
  kRecv,    // the user's receive buffer
  kScratch  // the collective's receive area for the current iteration parity
};

struct Place {
  Buffer buffer = Buffer::kRecv;
  size_t offset = 0;
};

// `count` blocks of `width` bytes, the i-th at dst.offset + i*dst_pitch (in the receiver's
// buffer) and src.offset + i*src_pitch (in this rank's).
struct Piece {
  Place dst;
  Place src;
  size_t width = 0;
  size_t count = 1;
  size_t dst_pitch = 0;
  size_t src_pitch = 0;
};

enum class OpKind : uint8_t {
  kSend,    // one chain to `peer`, announced by one notification (no pieces: notification only)
  kAwait,   // the notification of `peer`'s send of the same step
  kReduce,  // dst = a op b, `length` elements
  kCopy     // dst = a, `length` bytes (local)
};

struct Op {
  OpKind kind = OpKind::kSend;
  int peer = -1;  // a rank
  int step = 0;   // pairs a send with its await; selects the notification slot
  // The send writes into the receiver's receive buffer, and nothing the receiver did in this
  // iteration is known to have happened before it: it must wait for the receiver's credit.
  bool needs_credit = false;
  std::vector<Piece> pieces;
  Place dst;
  Place a;
  Place b;
  size_t length = 0;
};

// What every rank agrees on.
struct Shape {
  tcaCollKind kind = TCA_COLL_ALLREDUCE;
  tcaCollAlgorithm algorithm = TCA_COLL_RING;  // resolved: never AUTO, neighbor exchange only
                                               // for even rank counts
  int ranks = 1;
  size_t count = 0;  // elements; allgather: per rank
  size_t element_bytes = 0;
  std::vector<int> rank_at;  // position -> rank (tcaCollMapPositions)
  // Up to this size (every rank's data together) an allgather lands in scratch, which needs
  // no credits (it is double-buffered), and is copied out at the end: one local copy of a few
  // KiB costs less than waiting for every receiver to have started.
  size_t staged_allgather_bytes = 16 * 1024;
};

struct Schedule {
  std::vector<Op> ops;
  size_t scratch_bytes = 0;  // per iteration parity; equal on every rank
};

// The bytes a send's pieces carry.
size_t payload_bytes(const std::vector<Piece>& pieces);

// The schedule of `rank`. Every rank can compute every other rank's (to learn who writes
// into it).
Schedule build_schedule(const Shape& shape, int rank);

}  // namespace tca::coll
