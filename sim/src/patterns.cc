// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "patterns.h"

#include <algorithm>
#include <cmath>

namespace tca_sim {
namespace {

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

Step send(int dst, double bytes, MemKind kind, int slot) {
  Step s;
  s.kind = Step::kKick;
  Message m;
  m.dst_rank = dst;
  m.bytes = bytes;
  m.src_kind = m.dst_kind = kind;
  m.notify_slot = slot;
  s.messages.push_back(m);
  return s;
}

Step wait(int src, int slot) {
  Step s;
  s.kind = Step::kWait;
  s.peer = src;
  s.slot = slot;
  return s;
}

Step mark(Step::Kind kind, const std::string& name) {
  Step s;
  s.kind = kind;
  s.name = name;
  return s;
}

Step barrier() {
  Step s;
  s.kind = Step::kBarrier;
  return s;
}

// One step of an algorithm at position `me`: send `bytes` to position `to`, then wait for the
// message from position `from`.
struct Exchange {
  int to, from;
  double bytes;
};

// The exchanges of every step, per position, for an allgather of `block` bytes per position
// (allreduce: `block` is the message and no step grows).
std::vector<std::vector<Exchange>> schedule(Algorithm algorithm, int n, double block, bool grow) {
  std::vector<std::vector<Exchange>> steps(n);
  auto amount = [&](double blocks) { return grow ? blocks * block : block; };
  switch (algorithm) {
    case Algorithm::kRing:
      for (int me = 0; me < n; ++me)
        for (int s = 0; s < n - 1; ++s)
          steps[me].push_back({(me + 1) % n, (me - 1 + n) % n, amount(1)});
      break;
    case Algorithm::kNeighborExchange:
      if (n % 2 != 0) throw Error("neighbor exchange needs an even number of ranks");
      for (int me = 0; me < n; ++me) {
        const bool even = me % 2 == 0;
        const int right = (me + 1) % n, left = (me - 1 + n) % n;
        steps[me].push_back({even ? right : left, even ? right : left, amount(1)});
        for (int s = 1; s < n / 2; ++s) {
          const bool to_left = (s % 2 == 1) == even;
          const int peer = to_left ? left : right;
          steps[me].push_back({peer, peer, amount(2)});
        }
      }
      break;
    case Algorithm::kRecursiveDoubling:
      if (!power_of_two(n)) throw Error("recursive doubling needs a power-of-two number of ranks");
      for (int me = 0; me < n; ++me)
        for (int d = 1; d < n; d *= 2) steps[me].push_back({me ^ d, me ^ d, amount(d)});
      break;
    case Algorithm::kDissemination:
      for (int me = 0; me < n; ++me)
        for (int d = 1; d < n; d *= 2)
          steps[me].push_back({(me + d) % n, (me - d + n) % n, amount(std::min(d, n - d))});
      break;
  }
  return steps;
}

void append(std::vector<Program>& ranks, Algorithm algorithm, double block, bool grow, MemKind kind,
            const std::vector<int>& order, int first_slot) {
  const int n = static_cast<int>(ranks.size());
  std::vector<int> rank_at(n);
  for (int i = 0; i < n; ++i) rank_at[i] = order.empty() ? i : order[i];
  const auto steps = schedule(algorithm, n, block, grow);
  for (int position = 0; position < n; ++position) {
    Program& program = ranks[rank_at[position]];
    int slot = first_slot;
    for (const Exchange& e : steps[position]) {
      program.push_back(send(rank_at[e.to], e.bytes, kind, slot));
      program.push_back(wait(rank_at[e.from], slot));
      ++slot;
    }
  }
}

}  // namespace

Job pingpong(double bytes, MemKind kind, int iterations, Op op) {
  Job job;
  job.ranks.resize(2);
  for (int i = 0; i < iterations; ++i) {
    Step there = send(1, bytes, kind, 0), back = send(0, bytes, kind, 0);
    there.messages[0].op = back.messages[0].op = op;
    job.ranks[0].push_back(there);
    job.ranks[0].push_back(wait(1, 0));
    job.ranks[1].push_back(wait(0, 0));
    job.ranks[1].push_back(back);
  }
  return job;
}

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> all = {Algorithm::kRing, Algorithm::kNeighborExchange,
                                             Algorithm::kRecursiveDoubling,
                                             Algorithm::kDissemination};
  return all;
}

const char* algorithm_name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kNeighborExchange:
      return "neighbor_exchange";
    case Algorithm::kRecursiveDoubling:
      return "recursive_doubling";
    case Algorithm::kDissemination:
      return "dissemination";
  }
  return "?";
}

Algorithm parse_algorithm(const std::string& name) {
  for (Algorithm a : all_algorithms())
    if (name == algorithm_name(a)) return a;
  throw Error("algorithm '" + name +
              "' is not ring, neighbor_exchange, recursive_doubling or dissemination");
}

void append_allgather(std::vector<Program>& ranks, Algorithm algorithm, double total, MemKind kind,
                      const std::vector<int>& order, int first_slot) {
  append(ranks, algorithm, total / static_cast<double>(ranks.size()), true, kind, order,
         first_slot);
}

void append_allreduce(std::vector<Program>& ranks, Algorithm algorithm, double bytes, MemKind kind,
                      const std::vector<int>& order, int first_slot) {
  append(ranks, algorithm, bytes, false, kind, order, first_slot);
}

Job collective_job(bool allgather, Algorithm algorithm, double bytes, MemKind kind, int ranks,
                   const std::vector<int>& order) {
  Job job;
  job.ranks.resize(ranks);
  for (Program& p : job.ranks) {
    p.push_back(barrier());
    p.push_back(mark(Step::kPhaseBegin, "coll"));
  }
  if (allgather)
    append_allgather(job.ranks, algorithm, bytes, kind, order, 1);
  else
    append_allreduce(job.ranks, algorithm, bytes, kind, order, 1);
  for (Program& p : job.ranks) p.push_back(mark(Step::kPhaseEnd, "coll"));
  return job;
}

std::vector<int> optimized_order(const std::vector<int>& dims, int ranks) {
  if (!power_of_two(ranks)) throw Error("the node mapping needs a power-of-two number of ranks");
  // Step i of recursive doubling flips bit i of the position; each bit is one dimension's
  // coordinate offset (half the ring, a quarter, ..., one hop), so every pair of a step is the
  // same number of hops apart. Offsets go from the farthest to the nearest, so the last step,
  // which moves half the data, is between neighbours.
  struct Bit {
    int dim, value;
  };
  std::vector<Bit> bits;
  int nodes = 1;
  for (int d : dims) nodes *= d;
  if (ranks > nodes) throw Error("more ranks than torus nodes for the node mapping");
  for (size_t d = 0; d < dims.size(); ++d)
    for (int v = dims[d] / 2; v >= 1; v /= 2) bits.push_back({static_cast<int>(d), v});
  // Farthest first: larger hop value first, then later dimensions.
  std::stable_sort(bits.begin(), bits.end(),
                   [](const Bit& a, const Bit& b) { return a.value > b.value; });
  while (static_cast<int>(bits.size()) > 0 && (1 << bits.size()) > ranks) bits.pop_back();
  std::vector<int> order(ranks);
  for (int position = 0; position < ranks; ++position) {
    std::vector<int> c(dims.size(), 0);
    for (size_t i = 0; i < bits.size(); ++i)
      if (position & (1 << i)) c[bits[i].dim] += bits[i].value;
    int node = 0;
    for (size_t d = 0; d < dims.size(); ++d) node = node * dims[d] + c[d];
    order[position] = node;
  }
  return order;
}

std::vector<int> snake_placement(int ring, int ranks) {
  if (ranks < 2 || ranks % 2 != 0 || ranks > 2 * ring)
    throw Error("a double-ring placement needs an even count of 2 to " + std::to_string(2 * ring) +
                " ranks");
  std::vector<int> nodes;
  const int half = ranks / 2;
  for (int i = 0; i < half; ++i) nodes.push_back(i);
  for (int i = half; i-- > 0;) nodes.push_back(ring + i);
  return nodes;
}

std::vector<int> optimized_placement(int ring, int ranks) {
  if (ranks < 2 || ranks % 2 != 0 || ranks > 2 * ring)
    throw Error("a double-ring placement needs an even count of 2 to " + std::to_string(2 * ring) +
                " ranks");
  const int half = ranks / 2;
  std::vector<int> nodes = optimized_order({2, half}, ranks);
  for (int& n : nodes) n = (n / half) * ring + n % half;
  return nodes;
}

Job bfs_job(int ranks, int scale, int levels) {
  Job job;
  job.ranks.resize(ranks);
  const double vertices = std::ldexp(1.0, scale);
  const Algorithm reduce = power_of_two(ranks) ? Algorithm::kDissemination : Algorithm::kRing;
  const Algorithm gather = power_of_two(ranks) ? Algorithm::kRecursiveDoubling : Algorithm::kRing;
  for (Program& p : job.ranks) p.push_back(barrier());
  int slot = 1;
  for (int level = 0; level < levels; ++level) {
    for (Program& p : job.ranks) p.push_back(mark(Step::kPhaseBegin, "COMM.FLAG"));
    append_allreduce(job.ranks, reduce, 4, MemKind::kCpu, {}, slot);
    for (Program& p : job.ranks) {
      p.push_back(mark(Step::kPhaseEnd, "COMM.FLAG"));
      p.push_back(mark(Step::kPhaseBegin, "COMM.OUT"));
    }
    slot += 64;
    append_allgather(job.ranks, gather, 4 * vertices, MemKind::kGpu, {}, slot);
    for (Program& p : job.ranks) p.push_back(mark(Step::kPhaseEnd, "COMM.OUT"));
    slot += 64;
  }
  const double tree = 8 * vertices / ranks;
  for (int r = 0; r < ranks; ++r) {
    Program& p = job.ranks[r];
    p.push_back(mark(Step::kPhaseBegin, "COMM.TREE"));
    if (r != 0) {
      Step s = send(0, tree, MemKind::kGpu, slot);
      s.messages[0].dst_kind = MemKind::kCpu;
      p.push_back(s);
      Step drain;
      drain.kind = Step::kDrain;
      p.push_back(drain);
    } else {
      for (int src = 1; src < ranks; ++src) p.push_back(wait(src, slot));
    }
    p.push_back(mark(Step::kPhaseEnd, "COMM.TREE"));
  }
  return job;
}

Job cg_job(int ranks, double n, int iterations) {
  Job job;
  job.ranks.resize(ranks);
  int q = 1;
  while (q * q * 4 <= ranks) q *= 2;  // block rows of q ranks (q = sqrt|P| for 4^k ranks)
  const double piece = 8 * n / ranks;
  for (Program& p : job.ranks) p.push_back(barrier());
  int slot = 1;
  auto shifts = [&](const char* phase, double bytes, MemKind kind, bool along_rows) {
    for (int r = 0; r < ranks; ++r) job.ranks[r].push_back(mark(Step::kPhaseBegin, phase));
    for (int s = 1; s <= q; ++s) {
      for (int r = 0; r < ranks; ++r) {
        const int row = r / q, col = r % q;
        int to, from;
        if (q == 1) {
          to = (r + s) % ranks;
          from = (r - s % ranks + ranks) % ranks;
        } else if (along_rows) {
          to = row * q + (col + s) % q;
          from = row * q + (col - s % q + q) % q;
        } else {
          const int rows = ranks / q;
          to = ((row + s) % rows) * q + col;
          from = ((row - s % rows + rows) % rows) * q + col;
        }
        if (to == r) continue;
        job.ranks[r].push_back(send(to, bytes, kind, slot));
        job.ranks[r].push_back(wait(from, slot));
      }
      ++slot;
    }
    for (int r = 0; r < ranks; ++r) job.ranks[r].push_back(mark(Step::kPhaseEnd, phase));
  };
  for (int it = 0; it < iterations; ++it) {
    shifts("SPMV", piece, MemKind::kGpu, true);
    shifts("DOT", 8, MemKind::kCpu, true);
    shifts("EXCH", piece, MemKind::kGpu, false);
    slot = 1 + (slot % 4096);
  }
  return job;
}

}  // namespace tca_sim
