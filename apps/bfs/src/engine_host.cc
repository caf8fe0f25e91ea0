// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "engine_host.h"

#include <algorithm>

#include "bitmap.h"

namespace bfs {
namespace {

constexpr uint64_t kWordGrain = 256;  // bitmap words per piece of a parallel loop

uint64_t fetch_or(uint64_t& word, uint64_t bits) {
  return __atomic_fetch_or(&word, bits, __ATOMIC_RELAXED);
}

}  // namespace

HostEngine::HostEngine(const HostGraph& graph, Exchange& exchange, ThreadPool& pool)
    : graph_(graph),
      exchange_(exchange),
      pool_(pool),
      block_words_(graph.partition.per_rank() / 64),
      block_first_word_(graph.rank * (graph.partition.per_rank() / 64)),
      visited_(block_words_, 0),
      parents_(exchange.parents() + graph.rank * graph.partition.per_rank()),
      levels_(exchange.levels() + graph.rank * graph.partition.per_rank()),
      partial_(pool.size()) {}

void HostEngine::begin_search(vertex_t root) {
  const uint64_t per = graph_.partition.per_rank();
  uint64_t* frontier = exchange_.frontier(0);
  const uint64_t frontier_words = graph_.partition.padded() / 64;
  pool_.parallel_for(per, 1 << 16, [&](uint64_t first, uint64_t last, int) {
    std::fill(parents_ + first, parents_ + last, int64_t{-1});
    std::fill(levels_ + first, levels_ + last, int32_t{-1});
  });
  pool_.parallel_for(block_words_, 1 << 12, [&](uint64_t first, uint64_t last, int) {
    std::fill(visited_.begin() + first, visited_.begin() + last, uint64_t{0});
  });
  pool_.parallel_for(frontier_words, 1 << 14, [&](uint64_t first, uint64_t last, int) {
    std::fill(frontier + first, frontier + last, uint64_t{0});
  });
  frontier[root >> 6] |= bit_of(root);
  if (graph_.partition.owner(root) == graph_.rank) {
    const uint64_t local = root - first_global();
    parents_[local] = root;
    levels_[local] = 0;
    visited_[local >> 6] |= bit_of(local);
  }
}

void HostEngine::step(Direction direction, int level, int parity) {
  for (Partial& p : partial_) p = Partial{};
  const uint64_t* frontier = exchange_.frontier(parity);
  uint64_t* next = exchange_.frontier(parity ^ 1) + block_first_word_;
  if (direction == Direction::kTopDown)
    top_down(level, frontier, next);
  else
    bottom_up(level, frontier, next);
  Counts total;
  for (const Partial& p : partial_) {
    total.vertices += p.vertices;
    total.arcs += p.arcs;
  }
  exchange_.counts()[0] = total.vertices;
  exchange_.counts()[1] = total.arcs;
}

void HostEngine::bottom_up(int level, const uint64_t* frontier, uint64_t* next) {
  const uint64_t n = graph_.local_vertices;
  pool_.parallel_for(block_words_, kWordGrain, [&](uint64_t first, uint64_t last, int thread) {
    Partial& mine = partial_[thread];
    for (uint64_t word = first; word < last; ++word) {
      uint64_t unvisited = ~visited_[word] & valid_bits(word, n);
      uint64_t found = 0;
      while (unvisited != 0) {
        const int b = __builtin_ctzll(unvisited);
        unvisited &= unvisited - 1;
        const uint64_t w = word * 64 + b;
        const uint64_t end = graph_.row_offsets[w + 1];
        for (uint64_t i = graph_.row_offsets[w]; i < end; ++i) {
          const vertex_t u = graph_.columns[i];
          if (!test_bit(frontier, u)) continue;
          parents_[w] = u;
          levels_[w] = level + 1;
          found |= uint64_t{1} << b;
          ++mine.vertices;
          mine.arcs += static_cast<int64_t>(end - graph_.row_offsets[w]);
          break;
        }
      }
      next[word] = found;
      visited_[word] |= found;
    }
  });
}

void HostEngine::top_down(int level, const uint64_t* frontier, uint64_t* next) {
  pool_.parallel_for(block_words_, 1 << 12, [&](uint64_t first, uint64_t last, int) {
    std::fill(next + first, next + last, uint64_t{0});
  });
  const bool transposed = graph_.has_td_index();
  const std::vector<uint64_t>& offsets = transposed ? graph_.td_offsets : graph_.row_offsets;
  const std::vector<vertex_t>& columns = transposed ? graph_.td_columns : graph_.columns;
  // With one rank the graph is its own transpose, and only the local words can be set.
  const uint64_t words = transposed ? graph_.partition.padded() / 64 : block_words_;
  pool_.parallel_for(words, kWordGrain, [&](uint64_t first, uint64_t last, int thread) {
    Partial& mine = partial_[thread];
    for (uint64_t word = first; word < last; ++word) {
      uint64_t bits = frontier[word];
      while (bits != 0) {
        const uint64_t u = word * 64 + __builtin_ctzll(bits);
        bits &= bits - 1;
        for (uint64_t i = offsets[u]; i < offsets[u + 1]; ++i) {
          const vertex_t w = columns[i];
          const uint64_t bit = bit_of(w);
          if (__atomic_load_n(&visited_[w >> 6], __ATOMIC_RELAXED) & bit) continue;
          if (fetch_or(visited_[w >> 6], bit) & bit) continue;
          parents_[w] = static_cast<int64_t>(u);
          levels_[w] = level + 1;
          fetch_or(next[w >> 6], bit);
          ++mine.vertices;
          mine.arcs += static_cast<int64_t>(graph_.degree(w));
        }
      }
    }
  });
}

uint64_t HostEngine::visited_tuple_ends() {
  std::vector<uint64_t> sums(pool_.size(), 0);
  pool_.parallel_for(graph_.local_vertices, 1 << 16,
                     [&](uint64_t first, uint64_t last, int thread) {
                       uint64_t sum = 0;
                       for (uint64_t v = first; v < last; ++v)
                         if (parents_[v] != -1) sum += graph_.tuple_ends[v];
                       sums[thread] += sum;
                     });
  uint64_t total = 0;
  for (const uint64_t s : sums) total += s;
  return total;
}

}  // namespace bfs
