// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The algorithms, written in positions (tcaCollMapPositions orders the ranks). Every
// remote write lands either in the receiver's scratch for this iteration's parity, or in its
// receive buffer; docs/COLLECTIVES.md explains why neither can overwrite data the receiver
// still needs.
#include "coll/schedule.h"

#include <algorithm>
#include <utility>

namespace tca::coll {
namespace {

struct Segment {
  size_t offset = 0;
  size_t bytes = 0;
};

int floor_log2(int value) {
  int log = 0;
  while ((2 << log) <= value) ++log;
  return log;
}

// Builds one rank's ops; positions wrap around the ring of ranks.
class Builder {
 public:
  Builder(const Shape& shape, int rank)
      : shape_(shape), n_(shape.ranks), me_(position_of_rank(rank)) {}

  int n() const { return n_; }
  int me() const { return me_; }
  int wrap(int position) const { return ((position % n_) + n_) % n_; }
  int rank_of(int position) const { return shape_.rank_at[wrap(position)]; }
  int position_of_rank(int rank) const {
    return static_cast<int>(std::find(shape_.rank_at.begin(), shape_.rank_at.end(), rank) -
                            shape_.rank_at.begin());
  }

  // One piece, possibly empty (then the send is a bare notification).
  void send_piece(int to_position, int step, Place dst, Place src, size_t bytes) {
    Op op = make(OpKind::kSend, to_position, step);
    if (bytes > 0) op.pieces.push_back(Piece{dst, src, bytes, 1, bytes, bytes});
    schedule_.ops.push_back(std::move(op));
  }

  // Segments that lie at the same offsets in this rank's `buffer` and the receiver's.
  void send_segments(int to_position, int step, Buffer buffer, std::vector<Segment> segments,
                     bool needs_credit) {
    Op op = make(OpKind::kSend, to_position, step);
    op.needs_credit = needs_credit;
    op.pieces = coalesce(buffer, std::move(segments));
    schedule_.ops.push_back(std::move(op));
  }

  void await(int from_position, int step) {
    schedule_.ops.push_back(make(OpKind::kAwait, from_position, step));
  }

  void reduce(Place dst, Place a, Place b, size_t elements) {
    if (elements == 0) return;
    Op op;
    op.kind = OpKind::kReduce;
    op.dst = dst;
    op.a = a;
    op.b = b;
    op.length = elements;
    schedule_.ops.push_back(op);
  }

  void copy(Place dst, Place src, size_t bytes) {
    Op op;
    op.kind = OpKind::kCopy;
    op.dst = dst;
    op.a = src;
    op.length = bytes;
    schedule_.ops.push_back(op);
  }

  // The first send of exactly this rank's own block (every algorithm's first step sends only
  // that), and the sends of it right after (the direct exchange sends it to everyone), read it
  // from the send buffer, and the copy of it into `own` runs after them instead of before: the
  // transfers need not wait for a local copy (for large blocks, a third of the time). Later
  // sends may read `own` with other blocks, so the copy comes before anything else.
  void send_own_block_before_copying(Place own, size_t bytes) {
    auto& ops = schedule_.ops;
    auto sends_own_block = [&](const Op& op) {
      return op.kind == OpKind::kSend && op.pieces.size() == 1 && op.pieces[0].count == 1 &&
             op.pieces[0].src.buffer == own.buffer && op.pieces[0].src.offset == own.offset &&
             op.pieces[0].width == bytes;
    };
    auto after = std::find_if(ops.begin(), ops.end(), sends_own_block);
    if (after == ops.end()) after = ops.begin();  // a single rank sends nothing: just the copy
    for (; after != ops.end() && sends_own_block(*after); ++after)
      after->pieces[0].src = {Buffer::kSend, 0};
    Op copy_op;
    copy_op.kind = OpKind::kCopy;
    copy_op.dst = own;
    copy_op.a = {Buffer::kSend, 0};
    copy_op.length = bytes;
    ops.insert(after, copy_op);
  }

  void need_scratch(size_t bytes) {
    schedule_.scratch_bytes = std::max(schedule_.scratch_bytes, bytes);
  }
  Schedule take() { return std::move(schedule_); }

 private:
  Op make(OpKind kind, int position, int step) const {
    Op op;
    op.kind = kind;
    op.peer = rank_of(position);
    op.step = step;
    return op;
  }

  // Fewest pieces for the segments: adjacent ones merge, equal-width ones at a constant
  // pitch become one block-stride piece (a position order that is not the rank order turns
  // an allgather's group of blocks into such a stride).
  static std::vector<Piece> coalesce(Buffer buffer, std::vector<Segment> segments) {
    segments.erase(std::remove_if(segments.begin(), segments.end(),
                                  [](const Segment& s) { return s.bytes == 0; }),
                   segments.end());
    std::sort(segments.begin(), segments.end(),
              [](const Segment& x, const Segment& y) { return x.offset < y.offset; });
    std::vector<Segment> merged;
    for (const Segment& segment : segments) {
      if (!merged.empty() && merged.back().offset + merged.back().bytes == segment.offset)
        merged.back().bytes += segment.bytes;
      else
        merged.push_back(segment);
    }
    std::vector<Piece> pieces;
    for (size_t first = 0; first < merged.size();) {
      const Segment& head = merged[first];
      size_t end = first + 1;
      size_t pitch = head.bytes;
      if (end < merged.size() && merged[end].bytes == head.bytes) {
        pitch = merged[end].offset - head.offset;
        while (end < merged.size() && merged[end].bytes == head.bytes &&
               merged[end].offset - merged[end - 1].offset == pitch)
          ++end;
      }
      const Place place{buffer, head.offset};
      pieces.push_back(Piece{place, place, head.bytes, end - first, pitch, pitch});
      first = end;
    }
    return pieces;
  }

  const Shape& shape_;
  int n_;
  int me_;
  Schedule schedule_;
};

// ---- allgather of one block per position ----

// Where each position's block lies: in `buffer`, at the same offset on every rank.
struct Blocks {
  Buffer buffer;
  std::vector<Segment> of_position;
  bool needs_credit;  // the buffer is the receive buffer and nothing orders the writes after
                      // the receiver's start (a plain allgather)
};

class Allgather {
 public:
  Allgather(Builder& builder, const Blocks& blocks, int first_step)
      : b_(builder), blocks_(blocks), step_(first_step) {}

  void run(tcaCollAlgorithm algorithm) {
    switch (algorithm) {
      case TCA_COLL_RING:
        ring();
        break;
      case TCA_COLL_NEIGHBOR_EXCHANGE:
        neighbor_exchange();
        break;
      case TCA_COLL_RECURSIVE_DOUBLING:
        recursive_doubling();
        break;
      case TCA_COLL_DISSEMINATION:
        dissemination();
        break;
      case TCA_COLL_DIRECT:
        direct();
        break;
      case TCA_COLL_AUTO:
        break;  // resolved before any schedule is built
    }
  }

 private:
  std::vector<Segment> blocks_at(std::vector<int> positions) const {
    std::vector<Segment> segments;
    for (int position : positions) segments.push_back(blocks_.of_position[b_.wrap(position)]);
    return segments;
  }

  void exchange(int to, int from, std::vector<int> positions, bool needs_credit) {
    b_.send_segments(to, step_, blocks_.buffer, blocks_at(std::move(positions)), needs_credit);
    b_.await(from, step_);
    ++step_;
  }

  // Step s: block me-s to the next position, block me-s-1 from the previous one.
  void ring() {
    const int me = b_.me();
    for (int s = 0; s + 1 < b_.n(); ++s) exchange(me + 1, me - 1, {me - s}, blocks_.needs_credit);
  }

  // Chen et al.: first the own block with one neighbour, then pairs of blocks, alternating
  // between the two neighbours; n/2 steps. Even rank counts only.
  void neighbor_exchange() {
    const int me = b_.me();
    const bool even = me % 2 == 0;
    const int neighbor[2] = {even ? me + 1 : me - 1, even ? me - 1 : me + 1};
    const int shift[2] = {even ? 2 : -2, even ? -2 : 2};
    int received_from[2] = {even ? me : me - 1, even ? me : me - 1};  // first of a pair
    exchange(neighbor[0], neighbor[0], {me}, blocks_.needs_credit);
    int pair = even ? me : me - 1;
    for (int i = 1; i < b_.n() / 2; ++i) {
      const int side = i % 2;
      received_from[side] = b_.wrap(received_from[side] + shift[side]);
      exchange(neighbor[side], neighbor[side], {pair, pair + 1}, blocks_.needs_credit);
      pair = received_from[side];
    }
  }

  // Partners me ^ 2^i exchange everything they hold. With n = 2^k + extra, the first
  // 2*extra positions pair up first: the even one hands its block to the odd one and sits
  // out, then receives everything at the end.
  void recursive_doubling() {
    const int n = b_.n();
    const int me = b_.me();
    const int participants = 1 << floor_log2(n);
    const int extra = n - participants;
    // Virtual rank v stands for positions [first(v), first(v + 1)).
    auto first = [extra, n](int v) { return v < extra ? 2 * v : std::min(v + extra, n); };
    auto position_of = [extra](int v) { return v < extra ? 2 * v + 1 : v + extra; };
    const int pre_step = step_;
    const int steps = floor_log2(participants);
    if (extra > 0) ++step_;
    const int post_step = step_ + steps;
    if (me < 2 * extra && me % 2 == 0) {
      b_.send_segments(me + 1, pre_step, blocks_.buffer, blocks_at({me}), blocks_.needs_credit);
      b_.await(me + 1, post_step);
      return;
    }
    if (me < 2 * extra) b_.await(me - 1, pre_step);
    const int v = me < 2 * extra ? me / 2 : me - extra;
    for (int i = 0; i < steps; ++i) {
      const int group = v & ~((1 << i) - 1);
      std::vector<int> held;
      for (int p = first(group); p < first(group + (1 << i)); ++p) held.push_back(p);
      const int partner = position_of(v ^ (1 << i));
      exchange(partner, partner, std::move(held), blocks_.needs_credit);
    }
    if (me < 2 * extra) {
      std::vector<int> missing;  // at the even partner: everything but its own block
      for (int p = 0; p < n; ++p)
        if (p != me - 1) missing.push_back(p);
      // Ordered after the partner's start: what is sent includes its block of this iteration.
      b_.send_segments(me - 1, post_step, blocks_.buffer, blocks_at(std::move(missing)), false);
    }
  }

  // Bruck: step i sends the min(2^i, n - 2^i) blocks from this position on to position
  // me - 2^i; ceil(log2 n) steps for any n.
  void dissemination() {
    const int n = b_.n();
    const int me = b_.me();
    for (int distance = 1; distance < n; distance *= 2) {
      std::vector<int> held;
      for (int j = 0; j < std::min(distance, n - distance); ++j) held.push_back(me + j);
      exchange(me - distance, me + distance, std::move(held), blocks_.needs_credit);
    }
  }

  // Every send first, then every await: the own block to each position at distance d, as
  // step d-1, so each (receiver, step) has one writer.
  void direct() {
    const int n = b_.n();
    const int me = b_.me();
    for (int distance = 1; distance < n; ++distance)
      b_.send_segments(me + distance, step_ + distance - 1, blocks_.buffer, blocks_at({me}),
                       blocks_.needs_credit);
    for (int distance = 1; distance < n; ++distance) b_.await(me - distance, step_ + distance - 1);
    step_ += n - 1;
  }

  Builder& b_;
  const Blocks& blocks_;
  int step_;
};

Schedule allgather(const Shape& shape, Builder& b) {
  const size_t block = shape.count * shape.element_bytes;
  const size_t total = block * b.n();
  const bool staged = total <= shape.staged_allgather_bytes;
  Blocks blocks{staged ? Buffer::kScratch : Buffer::kRecv, {}, !staged};
  for (int position = 0; position < b.n(); ++position)
    blocks.of_position.push_back({static_cast<size_t>(b.rank_of(position)) * block, block});
  if (staged) b.need_scratch(total);
  Allgather(b, blocks, 0).run(shape.algorithm);
  b.send_own_block_before_copying({blocks.buffer, blocks.of_position[b.me()].offset}, block);
  if (staged) b.copy({Buffer::kRecv, 0}, {Buffer::kScratch, 0}, total);
  return b.take();
}

// ---- allreduce ----

// The vector cut into one chunk per position (at the same offsets in every buffer), and
// n-1 scratch slots each as large as the largest chunk: the receive areas of a reduce-scatter.
class Chunks {
 public:
  Chunks(const Shape& shape, Builder& b)
      : b_(b),
        element_bytes_(shape.element_bytes),
        base_(shape.count / b.n()),
        longer_(shape.count % b.n()),
        slot_bytes_((base_ + (longer_ > 0 ? 1 : 0)) * element_bytes_) {
    b.need_scratch(static_cast<size_t>(b.n() - 1) * slot_bytes_);
  }

  Segment of(int position) const {
    const size_t c = static_cast<size_t>(b_.wrap(position));
    return Segment{(c * base_ + std::min(c, longer_)) * element_bytes_,
                   (base_ + (c < longer_ ? 1 : 0)) * element_bytes_};
  }
  size_t elements(int position) const { return of(position).bytes / element_bytes_; }
  Place slot(int index) const {
    return {Buffer::kScratch, static_cast<size_t>(index) * slot_bytes_};
  }
  // The reduced chunks, allgathered from `first_step` on straight into the receive buffers:
  // every chunk holds every rank's contribution of this iteration, which orders the writes
  // after every receiver's start.
  void allgather(tcaCollAlgorithm algorithm, int first_step) const {
    Blocks blocks{Buffer::kRecv, {}, false};
    for (int position = 0; position < b_.n(); ++position)
      blocks.of_position.push_back(of(position));
    Allgather(b_, blocks, first_step).run(algorithm);
  }

 private:
  Builder& b_;
  size_t element_bytes_;
  size_t base_;
  size_t longer_;  // chunks [0, longer_) have one element more
  size_t slot_bytes_;
};

// Ring reduce-scatter: chunk c travels c+1, c+2, ..., c and ends fully reduced at position
// c; then the chunks are allgathered (ring or neighbor exchange).
void reduce_scatter_allgather(const Shape& shape, Builder& b) {
  const int n = b.n();
  const int me = b.me();
  const Chunks chunks(shape, b);
  for (int s = 0; s + 1 < n; ++s) {
    const Segment out = chunks.of(me - s - 1);
    const Segment in = chunks.of(me - s - 2);
    b.send_piece(me + 1, s, chunks.slot(s), {s == 0 ? Buffer::kSend : Buffer::kRecv, out.offset},
                 out.bytes);
    b.await(me - 1, s);
    b.reduce({Buffer::kRecv, in.offset}, {Buffer::kSend, in.offset}, chunks.slot(s),
             chunks.elements(me - s - 2));
  }
  chunks.allgather(shape.algorithm, n - 1);
}

// Direct reduce-scatter, then the direct allgather of the reduced chunks: chunk p goes to
// position p (to distance d as step d-1, into slot d-1), the owner reduces the n
// contributions of its chunk (its own first, then by distance), and sends the result to every
// position. Two steps of every message at once, the ring's 2(n-1)/n of the data per rank. Each
// chunk is reduced once, so every rank holds the same bits.
void direct_allreduce(const Shape& shape, Builder& b) {
  const int n = b.n();
  const int me = b.me();
  const Chunks chunks(shape, b);
  for (int d = 1; d < n; ++d) {
    const Segment out = chunks.of(me + d);
    b.send_piece(me + d, d - 1, chunks.slot(d - 1), {Buffer::kSend, out.offset}, out.bytes);
  }
  const size_t own = chunks.of(me).offset;
  for (int d = 1; d < n; ++d) {
    b.await(me - d, d - 1);
    b.reduce({Buffer::kRecv, own}, {d == 1 ? Buffer::kSend : Buffer::kRecv, own},
             chunks.slot(d - 1), chunks.elements(me));
  }
  chunks.allgather(TCA_COLL_DIRECT, n - 1);
}

// Whole vectors between partners me ^ 2^i; the extra positions of a non-power-of-two count
// fold into their odd neighbour first and get the result from it last.
void recursive_doubling_allreduce(const Shape& shape, Builder& b) {
  const int n = b.n();
  const int me = b.me();
  const size_t bytes = shape.count * shape.element_bytes;
  const int participants = 1 << floor_log2(n);
  const int extra = n - participants;
  const int steps = floor_log2(participants);
  const int first_step = extra > 0 ? 1 : 0;
  const int post_step = first_step + steps;
  b.need_scratch(static_cast<size_t>(first_step + steps) * bytes);
  auto inbox = [bytes](int step) {
    return Place{Buffer::kScratch, static_cast<size_t>(step) * bytes};
  };
  const Place whole_send{Buffer::kSend, 0};
  const Place whole_recv{Buffer::kRecv, 0};
  if (me < 2 * extra && me % 2 == 0) {
    b.send_piece(me + 1, 0, inbox(0), whole_send, bytes);
    b.await(me + 1, post_step);
    return;
  }
  Place partial = whole_send;
  if (me < 2 * extra) {
    b.await(me - 1, 0);
    b.reduce(whole_recv, whole_send, inbox(0), shape.count);
    partial = whole_recv;
  }
  const int v = me < 2 * extra ? me / 2 : me - extra;
  for (int i = 0; i < steps; ++i) {
    const int pv = v ^ (1 << i);
    const int partner = pv < extra ? 2 * pv + 1 : pv + extra;
    const int step = first_step + i;
    b.send_piece(partner, step, inbox(step), partial, bytes);
    b.await(partner, step);
    b.reduce(whole_recv, partial, inbox(step), shape.count);
    partial = whole_recv;
  }
  // The result includes the even partner's contribution: ordered after its start.
  if (me < 2 * extra) b.send_piece(me - 1, post_step, whole_recv, whole_recv, bytes);
}

// Every contribution is gathered (Bruck) into scratch, then reduced locally in rank order: every
// rank computes the same operations in the same order, bit for bit.
void gathered_allreduce(const Shape& shape, Builder& b) {
  const int n = b.n();
  const size_t bytes = shape.count * shape.element_bytes;
  b.need_scratch(static_cast<size_t>(n) * bytes);
  Blocks blocks{Buffer::kScratch, {}, false};
  for (int position = 0; position < n; ++position)
    blocks.of_position.push_back({static_cast<size_t>(position) * bytes, bytes});
  Allgather(b, blocks, 0).run(shape.algorithm);
  b.send_own_block_before_copying({Buffer::kScratch, blocks.of_position[b.me()].offset}, bytes);
  auto contribution = [&](int rank) {
    return Place{Buffer::kScratch, blocks.of_position[b.position_of_rank(rank)].offset};
  };
  const Place result{Buffer::kRecv, 0};
  b.reduce(result, contribution(0), contribution(1), shape.count);
  for (int rank = 2; rank < n; ++rank) b.reduce(result, result, contribution(rank), shape.count);
}

Schedule allreduce(const Shape& shape, Builder& b) {
  if (b.n() == 1) {
    b.copy({Buffer::kRecv, 0}, {Buffer::kSend, 0}, shape.count * shape.element_bytes);
    return b.take();
  }
  switch (shape.algorithm) {
    case TCA_COLL_RING:
    case TCA_COLL_NEIGHBOR_EXCHANGE:
      reduce_scatter_allgather(shape, b);
      break;
    case TCA_COLL_RECURSIVE_DOUBLING:
      recursive_doubling_allreduce(shape, b);
      break;
    case TCA_COLL_DISSEMINATION:
      gathered_allreduce(shape, b);
      break;
    case TCA_COLL_DIRECT:
      direct_allreduce(shape, b);
      break;
    case TCA_COLL_AUTO:
      break;  // resolved before any schedule is built
  }
  return b.take();
}

}  // namespace

size_t payload_bytes(const std::vector<Piece>& pieces) {
  size_t bytes = 0;
  for (const Piece& piece : pieces) bytes += piece.width * piece.count;
  return bytes;
}

Schedule build_schedule(const Shape& shape, int rank) {
  Builder builder(shape, rank);
  return shape.kind == TCA_COLL_ALLGATHER ? allgather(shape, builder) : allreduce(shape, builder);
}

}  // namespace tca::coll
