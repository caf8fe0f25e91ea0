// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Rank-to-position mapping (the seed slides' "node mapping optimization"). The algorithms
// talk to positions; on a wired topology the position order decides how many hops each
// step's messages travel.
#include <algorithm>
#include <vector>

#include "coll/status.h"
#include "tca/tca_coll.h"

namespace {

bool is_power_of_two(int value) { return value > 0 && (value & (value - 1)) == 0; }

int log2_exact(int power_of_two) {
  int log = 0;
  while ((1 << log) < power_of_two) ++log;
  return log;
}

// A Hamiltonian cycle of the dims[0] x dims[1] torus: along rows, turning back at every row
// end (along columns if only the row length is even, so that the cycle closes in one hop).
std::vector<int> snake(int width, int height) {
  const bool by_columns = height % 2 != 0 && width % 2 == 0;
  const int lines = by_columns ? width : height;
  const int length = by_columns ? height : width;
  std::vector<int> order;
  for (int line = 0; line < lines; ++line) {
    for (int i = 0; i < length; ++i) {
      const int along = line % 2 == 0 ? i : length - 1 - i;
      order.push_back(by_columns ? along * width + line : line * width + along);
    }
  }
  return order;
}

// Recursive doubling on a 2^a x 2^b torus (a ring is 2^k x 1): step i flips one bit of the
// rank's coordinates, so every pair of a step is the same number of hops apart. Bits are
// taken from the farthest (2^(a-1) hops) to the nearest (1 hop), so the last steps, which
// carry the most data, are between neighbours.
std::vector<int> recursive_doubling_order(int width, int height) {
  struct CoordinateBit {
    int rank_bit;  // bit of the rank (x is the low part, y the high part)
    int hops;      // distance between two ranks differing in it
  };
  const int x_bits = log2_exact(width);
  std::vector<CoordinateBit> bits;
  for (int j = 0; j < x_bits; ++j) bits.push_back({j, 1 << j});
  for (int j = 0; (1 << j) < height; ++j) bits.push_back({x_bits + j, 1 << j});
  std::stable_sort(bits.begin(), bits.end(), [](const CoordinateBit& p, const CoordinateBit& q) {
    return p.hops != q.hops ? p.hops > q.hops : p.rank_bit > q.rank_bit;
  });
  std::vector<int> order(static_cast<size_t>(width) * height);
  for (int position = 0; position < static_cast<int>(order.size()); ++position) {
    int rank = 0;
    for (size_t step = 0; step < bits.size(); ++step)
      if (position & (1 << step)) rank |= 1 << bits[step].rank_bit;
    order[position] = rank;
  }
  return order;
}

}  // namespace

namespace tca::coll {

tcaResult map_positions(tcaCollAlgorithm algorithm, const tcaCollTopology* topology, int ranks,
                        std::vector<int>* rank_at) {
  if (ranks < 1) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} ranks", ranks);
  if (algorithm < TCA_COLL_AUTO || algorithm >= TCA_COLL_ALGORITHMS)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown algorithm {}", static_cast<int>(algorithm));
  const tcaTopologyKind kind = topology != nullptr ? topology->kind : TCA_TOPOLOGY_NONE;
  int width = ranks;
  int height = 1;
  switch (kind) {
    case TCA_TOPOLOGY_NONE:  // tca.h has no topology query yet: nothing is reported
    case TCA_TOPOLOGY_FLAT:
      rank_at->resize(ranks);
      for (int position = 0; position < ranks; ++position) (*rank_at)[position] = position;
      return TCA_SUCCESS;
    case TCA_TOPOLOGY_RING:
      break;
    case TCA_TOPOLOGY_TORUS_2D:
      width = topology->dims[0];
      height = topology->dims[1];
      if (width < 1 || height < 1 || static_cast<long>(width) * height != ranks)
        TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "a {} x {} torus does not hold {} ranks", width,
                 height, ranks);
      break;
    default:
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown topology kind {}", static_cast<int>(kind));
  }
  const bool hypercube_fits = is_power_of_two(width) && is_power_of_two(height);
  *rank_at = algorithm == TCA_COLL_RECURSIVE_DOUBLING && hypercube_fits
                 ? recursive_doubling_order(width, height)
                 : snake(width, height);  // for distances 2^i too: no order keeps all short
  return TCA_SUCCESS;
}

}  // namespace tca::coll

extern "C" tcaResult tcaCollMapPositions(tcaCollAlgorithm algorithm,
                                         const tcaCollTopology* topology, int ranks,
                                         int* rank_at_position) {
  if (rank_at_position == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "rank_at_position is NULL");
  std::vector<int> rank_at;
  TCA_CHECK(tca::coll::map_positions(algorithm, topology, ranks, &rank_at));
  std::copy(rank_at.begin(), rank_at.end(), rank_at_position);
  return TCA_SUCCESS;
}
