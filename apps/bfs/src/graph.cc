// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "graph.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "agree.h"
#include "control.h"

namespace bfs {
namespace {

template <class T>
T atomic_add(T& target, T value) {
  return __atomic_fetch_add(&target, value, __ATOMIC_RELAXED);
}

// Exclusive prefix sums of `counts` into offsets (offsets.size() == counts.size() + 1).
template <class Count>
std::vector<uint64_t> prefix_offsets(const std::vector<Count>& counts) {
  std::vector<uint64_t> offsets(counts.size() + 1, 0);
  for (size_t i = 0; i < counts.size(); ++i) offsets[i + 1] = offsets[i] + counts[i];
  return offsets;
}

// Arcs of one round of an exchange that must go in several: elements [done[r], done[r] + take)
// of every segment.
std::vector<uint64_t> exchange_round(const std::vector<uint64_t>& send,
                                     const std::vector<uint64_t>& send_offsets,
                                     const std::vector<uint64_t>& send_counts,
                                     const std::vector<uint64_t>& recv_counts, uint64_t done,
                                     uint64_t limit) {
  const int ranks = static_cast<int>(send_counts.size());
  std::vector<size_t> scount(ranks), sdispl(ranks), rcount(ranks), rdispl(ranks);
  uint64_t stotal = 0, rtotal = 0;
  for (int r = 0; r < ranks; ++r) {
    scount[r] = std::min(limit, send_counts[r] - std::min(done, send_counts[r]));
    rcount[r] = std::min(limit, recv_counts[r] - std::min(done, recv_counts[r]));
    sdispl[r] = stotal;
    rdispl[r] = rtotal;
    stotal += scount[r];
    rtotal += rcount[r];
  }
  std::vector<uint64_t> staged(stotal), received(rtotal);
  for (int r = 0; r < ranks; ++r)
    std::copy_n(send.begin() + static_cast<ptrdiff_t>(send_offsets[r] + done), scount[r],
                staged.begin() + sdispl[r]);
  tca_apps::alltoallv(staged.data(), scount.data(), sdispl.data(), received.data(), rcount.data(),
                      rdispl.data(), sizeof(uint64_t));
  return received;
}

// The transpose of this rank's block: for every global u, the local rows that have u as a
// neighbour (td_offsets over all of the partition's ids).
void build_td_index(HostGraph& graph, ThreadPool& pool) {
  constexpr uint64_t kGrain = 1 << 16;
  const uint64_t n = graph.local_vertices;
  std::vector<uint32_t> td_counts(graph.partition.padded(), 0);
  pool.parallel_for(graph.columns.size(), kGrain, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t i = first; i < last; ++i) atomic_add(td_counts[graph.columns[i]], 1u);
  });
  graph.td_offsets = prefix_offsets(td_counts);
  std::vector<uint64_t> td_cursor(graph.td_offsets.begin(), graph.td_offsets.end() - 1);
  graph.td_columns.resize(graph.columns.size());
  pool.parallel_for(n, 4096, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t row = first; row < last; ++row)
      for (uint64_t i = graph.row_offsets[row]; i < graph.row_offsets[row + 1]; ++i)
        graph.td_columns[atomic_add(td_cursor[graph.columns[i]], uint64_t{1})] =
            static_cast<vertex_t>(row);
  });
}

}  // namespace

std::vector<uint64_t> bucket_arcs(const Edge* edges, uint64_t count, const Partition& partition,
                                  ThreadPool& pool, std::vector<uint64_t>& counts) {
  const int ranks = partition.ranks();
  const uint64_t blocks = std::min<uint64_t>(std::max<uint64_t>(1, count / 4096),
                                             static_cast<uint64_t>(pool.size()) * 8);
  const auto block_range = [&](uint64_t b) {
    return even_share(count, static_cast<int>(b), static_cast<int>(blocks));
  };
  std::vector<uint64_t> block_counts(blocks * ranks, 0);
  pool.parallel_for(blocks, 1, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t b = first; b < last; ++b) {
      uint64_t* mine = &block_counts[b * ranks];
      const Range range = block_range(b);
      for (uint64_t i = range.first; i < range.last; ++i) {
        ++mine[partition.owner(static_cast<uint64_t>(edges[i].u))];
        ++mine[partition.owner(static_cast<uint64_t>(edges[i].v))];
      }
    }
  });
  // Destination-major: all blocks' arcs for rank 0, then rank 1, ...
  counts.assign(ranks, 0);
  std::vector<uint64_t> cursor(blocks * ranks);
  uint64_t total = 0;
  for (int r = 0; r < ranks; ++r)
    for (uint64_t b = 0; b < blocks; ++b) {
      cursor[b * ranks + r] = total;
      total += block_counts[b * ranks + r];
      counts[r] += block_counts[b * ranks + r];
    }
  std::vector<uint64_t> arcs(total);
  pool.parallel_for(blocks, 1, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t b = first; b < last; ++b) {
      uint64_t* at = &cursor[b * ranks];
      const Range range = block_range(b);
      for (uint64_t i = range.first; i < range.last; ++i) {
        const auto u = static_cast<uint64_t>(edges[i].u), v = static_cast<uint64_t>(edges[i].v);
        const int owner_u = partition.owner(u), owner_v = partition.owner(v);
        arcs[at[owner_u]++] = arc_key(u - partition.first(owner_u), v);
        arcs[at[owner_v]++] = arc_key(v - partition.first(owner_v), u);
      }
    }
  });
  return arcs;
}

std::vector<uint64_t> exchange_arcs(std::vector<uint64_t> send,
                                    const std::vector<uint64_t>& counts) {
  const int ranks = static_cast<int>(counts.size());
  std::vector<uint64_t> recv_counts(ranks);
  {
    // Every pair's count: one element each way.
    std::vector<size_t> ones(ranks, 1), offsets(ranks);
    for (int r = 0; r < ranks; ++r) offsets[r] = static_cast<size_t>(r);
    tca_apps::alltoallv(counts.data(), ones.data(), offsets.data(), recv_counts.data(), ones.data(),
                        offsets.data(), sizeof(uint64_t));
  }
  if (ranks == 1) return send;  // moved out
  const std::vector<uint64_t> send_offsets = prefix_offsets(counts);
  const std::vector<uint64_t> recv_offsets = prefix_offsets(recv_counts);
  // Each round moves at most `limit` arcs per pair, so every count and displacement fits an int.
  const uint64_t limit = std::max<uint64_t>(1, (uint64_t{1} << 27) / ranks);
  uint64_t longest = 0;
  for (int r = 0; r < ranks; ++r) longest = std::max({longest, counts[r], recv_counts[r]});
  const uint64_t all_rounds =
      tca_apps::allreduce<uint64_t>((longest + limit - 1) / limit, tca_apps::Op::kMax);
  std::vector<uint64_t> received(recv_offsets[ranks]);
  for (uint64_t round = 0; round < all_rounds; ++round) {
    const uint64_t done = round * limit;
    const std::vector<uint64_t> piece =
        exchange_round(send, send_offsets, counts, recv_counts, done, limit);
    uint64_t at = 0;
    for (int r = 0; r < ranks; ++r) {
      const uint64_t take = std::min(limit, recv_counts[r] - std::min(done, recv_counts[r]));
      std::copy_n(piece.begin() + static_cast<ptrdiff_t>(at), take,
                  received.begin() + static_cast<ptrdiff_t>(recv_offsets[r] + done));
      at += take;
    }
  }
  return received;
}

void build_local_graph(std::vector<uint64_t>& arcs, HostGraph& graph, ThreadPool& pool) {
  const uint64_t n = graph.local_vertices;
  const uint64_t first_global = graph.partition.first(graph.rank);
  constexpr uint64_t kGrain = 1 << 16;
  // Arcs per row, before anything is dropped: the tuple ends.
  graph.tuple_ends.assign(n, 0);
  pool.parallel_for(arcs.size(), kGrain, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t i = first; i < last; ++i) atomic_add(graph.tuple_ends[arcs[i] >> 32], 1u);
  });
  std::vector<uint64_t> raw_offsets = prefix_offsets(graph.tuple_ends);
  std::vector<uint64_t> cursor(raw_offsets.begin(), raw_offsets.end() - 1);
  std::vector<vertex_t> raw(arcs.size());
  pool.parallel_for(arcs.size(), kGrain, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t i = first; i < last; ++i)
      raw[atomic_add(cursor[arcs[i] >> 32], uint64_t{1})] = static_cast<vertex_t>(arcs[i]);
  });
  std::vector<uint64_t>().swap(arcs);
  std::vector<uint64_t>().swap(cursor);
  // Each row sorted, one arc per neighbour, none to the vertex itself.
  std::vector<uint32_t> kept(n);
  pool.parallel_for(n, 4096, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t row = first; row < last; ++row) {
      vertex_t* begin = raw.data() + raw_offsets[row];
      vertex_t* end = raw.data() + raw_offsets[row + 1];
      std::sort(begin, end);
      end = std::unique(begin, end);
      end = std::remove(begin, end, static_cast<vertex_t>(first_global + row));
      kept[row] = static_cast<uint32_t>(end - begin);
    }
  });
  graph.row_offsets = prefix_offsets(kept);
  graph.columns.resize(graph.row_offsets[n]);
  pool.parallel_for(n, 4096, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t row = first; row < last; ++row)
      std::copy_n(raw.begin() + static_cast<ptrdiff_t>(raw_offsets[row]), kept[row],
                  graph.columns.begin() + static_cast<ptrdiff_t>(graph.row_offsets[row]));
  });
  if (graph.has_td_index()) build_td_index(graph, pool);
}

HostGraph build_graph(const std::vector<Edge>& edges, const Partition& partition,
                      ThreadPool& pool) {
  HostGraph graph;
  graph.rank = tca_apps::rank();
  graph.partition = partition;
  graph.local_vertices = partition.count(graph.rank);
  std::vector<uint64_t> counts;
  std::vector<uint64_t> arcs;
  collectively([&] { arcs = bucket_arcs(edges.data(), edges.size(), partition, pool, counts); });
  std::vector<uint64_t> received = exchange_arcs(std::move(arcs), counts);
  collectively([&] { build_local_graph(received, graph, pool); });
  graph.total_arcs = tca_apps::allreduce<uint64_t>(graph.columns.size(), tca_apps::Op::kSum);
  return graph;
}

}  // namespace bfs
