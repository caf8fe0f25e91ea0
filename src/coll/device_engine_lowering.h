// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Lowers a collective's schedules to a GPU program (tca/detail/coll_program.h): the scratch
// layout of signals, credits and mailboxes, equal on every rank, and the instruction lists of
// every channel and iteration parity. Host code only: no CUDA call, no tca memory (the engine,
// device_engine.cc, allocates and maps what the layout asks for).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/schedule.h"
#include "tca/detail/coll_program.h"
#include "tca/tca.h"

namespace tca::coll {

// Where every rank's buffers lie, as this rank addresses them (its own or mapped for its GPU).
struct LoweringAddresses {
  const void* send = nullptr;           // this rank's send buffer
  std::vector<unsigned char*> scratch;  // [rank]: the collective's scratch (scratch_bytes())
  std::vector<unsigned char*> recv;     // [rank]: the receive buffer
};

class DeviceLowering {
 public:
  // Every rank's schedule of every channel (who sends what to whom is needed on both ends) and
  // the scratch layout. `channels` splits the shape's elements; it is at most shape.count.
  tcaResult plan(const Shape& shape, int rank, int ranks, bool inline_protocol, int channels);
  // Signals and credits, then two parity blocks of scratch and mailboxes: zeroed before use.
  size_t scratch_bytes() const { return signal_bytes_ + 2 * parity_bytes_; }
  // The instructions of every channel and parity, and the table of where each list lies.
  void emit(const LoweringAddresses& addresses, std::vector<tca_coll_program::Channel>* channels,
            std::vector<tca_coll_program::Instruction>* instructions,
            std::vector<tca_coll_program::Segment>* segments);

 private:
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

  size_t channel_first(int channel) const { return shape_.count * channel / channels_; }
  size_t channel_count(int channel) const {
    return channel_first(channel + 1) - channel_first(channel);
  }
  uint64_t* signal_cell(int owner, int channel, size_t index) const {
    return reinterpret_cast<uint64_t*>(addresses_.scratch[owner]) + channel * cells_per_channel_ +
           index;
  }
  uint64_t* credit_cell(int owner, int channel, int from) const {
    return signal_cell(owner, channel, steps_ + from);
  }
  unsigned char* parity_base(int owner, int parity) const {
    return addresses_.scratch[owner] + signal_bytes_ + parity * parity_bytes_;
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

  void emit_channel(int channel, int parity,
                    std::vector<tca_coll_program::Instruction>* instructions,
                    std::vector<tca_coll_program::Segment>* segments) const;
  void send_from_reduction(size_t first_instruction,
                           std::vector<tca_coll_program::Instruction>* instructions,
                           std::vector<tca_coll_program::Segment>* segments) const;

  int rank_ = 0;
  int ranks_ = 1;
  Shape shape_;
  bool inline_ = false;
  int channels_ = 1;
  std::vector<std::vector<Schedule>> schedules_;  // [channel][rank]
  size_t steps_ = 0;                              // signal cells of steps, per channel
  size_t cells_per_channel_ = 0;                  // steps, then a credit cell per rank
  size_t signal_bytes_ = 0;
  size_t parity_bytes_ = 0;
  std::vector<size_t> scratch_offset_;               // [channel], in a parity block
  std::vector<std::vector<size_t>> mailbox_offset_;  // [channel][step], in a parity block
  LoweringAddresses addresses_;                      // emit()'s
};

}  // namespace tca::coll
