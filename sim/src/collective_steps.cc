// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "collective_steps.h"

#include <algorithm>

#include "params.h"  // Error

namespace tca_sim {
namespace {

int floor_log2(int n) {
  int log = 0;
  while ((2 << log) <= n) ++log;
  return log;
}

class Steps {
 public:
  Steps(int n, int me) : n_(n), me_(me) {}

  int wrap(int position) const { return ((position % n_) + n_) % n_; }
  void send(int to, double bytes, int step) { out_.push_back({true, wrap(to), bytes, step}); }
  void await(int from, int step) { out_.push_back({false, wrap(from), 0, step}); }
  void exchange(int to, int from, double bytes, int step) {
    send(to, bytes, step);
    await(from, step);
  }
  int n() const { return n_; }
  int me() const { return me_; }
  std::vector<CollectiveStep> take() { return std::move(out_); }

 private:
  int n_, me_;
  std::vector<CollectiveStep> out_;
};

// Allgather of `block` bytes per position from step `step` on; returns the next free step.
int allgather(Steps& s, const std::string& algorithm, double block, int step) {
  const int n = s.n(), me = s.me();
  if (algorithm == "ring") {
    for (int i = 0; i + 1 < n; ++i) s.exchange(me + 1, me - 1, block, step++);
  } else if (algorithm == "neighbor_exchange") {
    if (n % 2 != 0)
      throw Error("neighbor exchange needs an even number of ranks, not " + std::to_string(n));
    const bool even = me % 2 == 0;
    const int neighbor[2] = {even ? me + 1 : me - 1, even ? me - 1 : me + 1};
    s.exchange(neighbor[0], neighbor[0], block, step++);
    for (int i = 1; i < n / 2; ++i) s.exchange(neighbor[i % 2], neighbor[i % 2], 2 * block, step++);
  } else if (algorithm == "recursive_doubling") {
    // Partners exchange what they hold; the first 2*extra positions fold in pairs first.
    const int participants = 1 << floor_log2(n);
    const int extra = n - participants;
    auto first = [extra, n](int v) { return v < extra ? 2 * v : std::min(v + extra, n); };
    auto position_of = [extra](int v) { return v < extra ? 2 * v + 1 : v + extra; };
    const int pre = step, rounds = floor_log2(participants);
    if (extra > 0) ++step;
    const int post = step + rounds;
    if (me < 2 * extra && me % 2 == 0) {
      s.send(me + 1, block, pre);
      s.await(me + 1, post);
      return post + 1;
    }
    if (me < 2 * extra) s.await(me - 1, pre);
    const int v = me < 2 * extra ? me / 2 : me - extra;
    for (int i = 0; i < rounds; ++i) {
      const int group = v & ~((1 << i) - 1);
      const int held = first(group + (1 << i)) - first(group);
      const int partner = position_of(v ^ (1 << i));
      s.exchange(partner, partner, held * block, step++);
    }
    if (me < 2 * extra) s.send(me - 1, (n - 1) * block, post);
    return extra > 0 ? post + 1 : step;
  } else if (algorithm == "dissemination") {
    for (int d = 1; d < n; d *= 2) s.exchange(me - d, me + d, std::min(d, n - d) * block, step++);
  } else if (algorithm == "direct") {
    for (int d = 1; d < n; ++d) s.send(me + d, block, step + d - 1);
    for (int d = 1; d < n; ++d) s.await(me - d, step + d - 1);
    step += n - 1;
  } else {
    throw Error("collective algorithm '" + algorithm +
                "' is not ring, neighbor_exchange, recursive_doubling, dissemination or direct");
  }
  return step;
}

void allreduce(Steps& s, const std::string& algorithm, double bytes) {
  const int n = s.n(), me = s.me();
  const double chunk = bytes / n;
  if (algorithm == "ring" || algorithm == "neighbor_exchange") {  // ring reduce-scatter first
    if (algorithm == "neighbor_exchange" && n % 2 != 0)
      throw Error("neighbor exchange needs an even number of ranks, not " + std::to_string(n));
    for (int i = 0; i + 1 < n; ++i) s.exchange(me + 1, me - 1, chunk, i);
    allgather(s, algorithm, chunk, n - 1);
  } else if (algorithm == "direct") {  // direct reduce-scatter, then the direct allgather
    for (int d = 1; d < n; ++d) s.send(me + d, chunk, d - 1);
    for (int d = 1; d < n; ++d) s.await(me - d, d - 1);
    allgather(s, "direct", chunk, n - 1);
  } else if (algorithm == "recursive_doubling") {  // whole vectors, extras folded
    const int participants = 1 << floor_log2(n);
    const int extra = n - participants;
    const int first = extra > 0 ? 1 : 0, rounds = floor_log2(participants);
    const int post = first + rounds;
    if (me < 2 * extra && me % 2 == 0) {
      s.send(me + 1, bytes, 0);
      s.await(me + 1, post);
      return;
    }
    if (me < 2 * extra) s.await(me - 1, 0);
    const int v = me < 2 * extra ? me / 2 : me - extra;
    for (int i = 0; i < rounds; ++i) {
      const int pv = v ^ (1 << i);
      s.exchange(pv < extra ? 2 * pv + 1 : pv + extra, pv < extra ? 2 * pv + 1 : pv + extra, bytes,
                 first + i);
    }
    if (me < 2 * extra) s.send(me - 1, bytes, post);
  } else if (algorithm == "dissemination") {  // every vector gathered (Bruck), reduced locally
    allgather(s, "dissemination", bytes, 0);
  } else {
    throw Error("collective algorithm '" + algorithm +
                "' is not ring, neighbor_exchange, recursive_doubling, dissemination or direct");
  }
}

}  // namespace

std::vector<CollectiveStep> collective_steps(const std::string& op, const std::string& algorithm,
                                             double bytes, int ranks, int me) {
  if (ranks < 1) throw Error("a collective needs at least one rank, not " + std::to_string(ranks));
  if (me < 0 || me >= ranks)
    throw Error("position " + std::to_string(me) + " is outside a collective of " +
                std::to_string(ranks) + " ranks");
  if (bytes < 0) throw Error("a collective cannot move a negative number of bytes");
  Steps s(ranks, me);
  if (op == "allgather") {
    if (ranks > 1) allgather(s, algorithm, bytes / ranks, 0);
  } else if (op == "allreduce") {
    if (ranks > 1) allreduce(s, algorithm, bytes);
  } else {
    throw Error("collective '" + op + "' is not allreduce or allgather");
  }
  return s.take();
}

}  // namespace tca_sim
