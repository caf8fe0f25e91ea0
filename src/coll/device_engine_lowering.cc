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
#include "coll/device_engine_lowering.h"

#include <algorithm>

#include "base/error.h"

namespace tca::coll {

using namespace tca_coll_program;

namespace {

constexpr size_t kAlignment = 256;

size_t align_up(size_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

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

}  // namespace

tcaResult DeviceLowering::plan(const Shape& shape, int rank, int ranks, bool inline_protocol,
                               int channels) {
  rank_ = rank;
  ranks_ = ranks;
  shape_ = shape;
  inline_ = inline_protocol;
  channels_ = channels;
  // Inline messages land in mailboxes and need no credits: staging in scratch only adds copies.
  if (inline_) shape_.staged_allgather_bytes = 0;
  schedules_.assign(channels_, std::vector<Schedule>(ranks_));
  steps_ = 0;
  for (int channel = 0; channel < channels_; ++channel) {
    Shape part = shape_;
    part.count = channel_count(channel);
    for (int r = 0; r < ranks_; ++r) {
      schedules_[channel][r] = build_schedule(part, r);
      for (const Op& op : schedules_[channel][r].ops)
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
    for (int r = 0; r < ranks_; ++r) {
      for (const Op& op : schedules_[channel][r].ops) {
        if (op.kind == OpKind::kAwait && matching_send(channel, op.peer, r, op.step) == nullptr)
          TCA_FAIL(TCA_ERROR_INTERNAL, "rank {} awaits step {} from rank {}, which never sends it",
                   r, op.step, op.peer);
        if (!inline_ || op.kind != OpKind::kSend) continue;
        // A message without data (an empty chunk) is its flag alone: one cell.
        mailbox_bytes[op.step] = std::max(
            mailbox_bytes[op.step],
            std::max<size_t>(1, inline_cells(payload_bytes(op.pieces))) * sizeof(uint64_t));
      }
    }
    for (size_t step = 0; step < steps_; ++step) {
      mailbox_offset_[channel][step] = cursor;
      cursor += align_up(mailbox_bytes[step]);
    }
  }
  parity_bytes_ = cursor;
  return TCA_SUCCESS;
}

void DeviceLowering::emit(const LoweringAddresses& addresses, std::vector<Channel>* channels,
                          std::vector<Instruction>* instructions, std::vector<Segment>* segments) {
  addresses_ = addresses;
  channels->assign(channels_, Channel{});
  for (int channel = 0; channel < channels_; ++channel) {
    Channel& entry = (*channels)[channel];
    for (int parity = 0; parity < 2; ++parity) {
      entry.first_instruction[parity] = static_cast<uint32_t>(instructions->size());
      entry.first_segment[parity] = static_cast<uint32_t>(segments->size());
      emit_channel(channel, parity, instructions, segments);
      entry.segments[parity] =
          static_cast<uint32_t>(segments->size()) - entry.first_segment[parity];
      entry.instructions[parity] =
          static_cast<uint32_t>(instructions->size()) - entry.first_instruction[parity];
    }
  }
}

std::vector<DeviceLowering::Run> DeviceLowering::runs(int channel, Buffer buffer, size_t offset,
                                                      size_t bytes) const {
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

unsigned char* DeviceLowering::address(int owner, int channel, int parity, Buffer buffer,
                                       size_t offset) const {
  switch (buffer) {
    case Buffer::kSend:  // only ever read locally
      return static_cast<unsigned char*>(const_cast<void*>(addresses_.send)) + offset;
    case Buffer::kRecv:
      return addresses_.recv[owner] + offset;
    case Buffer::kScratch:
      return parity_base(owner, parity) + scratch_offset_[channel] + offset;
  }
  return nullptr;
}

std::vector<DeviceLowering::Span> DeviceLowering::spans(int channel,
                                                        const std::vector<Piece>& pieces,
                                                        bool split_dst, bool split_src) const {
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

const Op* DeviceLowering::matching_send(int channel, int sender, int receiver, int step) const {
  for (const Op& op : schedules_[channel][sender].ops)
    if (op.kind == OpKind::kSend && op.peer == receiver && op.step == step) return &op;
  return nullptr;
}

// An inline send of exactly the result of the inline reduction before it (recursive
// doubling's next step) goes out from that reduction's registers: no reload, no barrier. Only
// within the list that starts at `first_instruction` (lists of other channels and parities
// precede it in the vector).
void DeviceLowering::send_from_reduction(size_t first_instruction,
                                         std::vector<Instruction>* instructions,
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

void DeviceLowering::emit_channel(int channel, int parity, std::vector<Instruction>* instructions,
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
        if (inline_) {  // without pieces: a message of the flag alone (no fenced signal)
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
        if (inline_) {
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
}

}  // namespace tca::coll
