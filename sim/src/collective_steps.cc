// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The steps come from the library's own schedule builder (src/coll/schedule.cc, the tca_schedule
// library): the schedule of a collective of one-byte elements at identity positions, of which
// the sends and awaits are kept.
#include "collective_steps.h"

#include <cmath>
#include <utility>

#include "coll/schedule.h"
#include "params.h"  // Error

namespace tca_sim {
namespace {

tcaCollAlgorithm algorithm_of(const std::string& name) {
  // The names of tcaCollAlgorithmName (libtca's, so not callable here).
  static const std::pair<const char*, tcaCollAlgorithm> kAlgorithms[] = {
      {"ring", TCA_COLL_RING},
      {"neighbor_exchange", TCA_COLL_NEIGHBOR_EXCHANGE},
      {"recursive_doubling", TCA_COLL_RECURSIVE_DOUBLING},
      {"dissemination", TCA_COLL_DISSEMINATION},
      {"direct", TCA_COLL_DIRECT}};
  for (const auto& [known, algorithm] : kAlgorithms)
    if (name == known) return algorithm;
  throw Error("collective algorithm '" + name +
              "' is not ring, neighbor_exchange, recursive_doubling, dissemination or direct");
}

}  // namespace

std::vector<CollectiveStep> collective_steps(const std::string& op, const std::string& algorithm,
                                             double bytes, int ranks, int me) {
  if (ranks < 1) throw Error("a collective needs at least one rank, not " + std::to_string(ranks));
  if (me < 0 || me >= ranks)
    throw Error("position " + std::to_string(me) + " is outside a collective of " +
                std::to_string(ranks) + " ranks");
  if (bytes < 0) throw Error("a collective cannot move a negative number of bytes");
  tca::coll::Shape shape;
  if (op == "allgather") {
    shape.kind = TCA_COLL_ALLGATHER;
  } else if (op == "allreduce") {
    shape.kind = TCA_COLL_ALLREDUCE;
  } else {
    throw Error("collective '" + op + "' is not allreduce or allgather");
  }
  shape.algorithm = algorithm_of(algorithm);
  if (shape.algorithm == TCA_COLL_NEIGHBOR_EXCHANGE && ranks % 2 != 0)
    throw Error("neighbor exchange needs an even number of ranks, not " + std::to_string(ranks));
  shape.ranks = ranks;
  shape.element_bytes = 1;
  // allgather: `bytes` is every rank's data together; the shape counts one rank's.
  const double count = shape.kind == TCA_COLL_ALLGATHER ? bytes / ranks : bytes;
  shape.count = static_cast<size_t>(std::llround(count));
  for (int rank = 0; rank < ranks; ++rank) shape.rank_at.push_back(rank);

  std::vector<CollectiveStep> steps;
  for (const tca::coll::Op& step : tca::coll::build_schedule(shape, me).ops) {
    if (step.kind == tca::coll::OpKind::kSend)
      steps.push_back(
          {true, step.peer, static_cast<double>(tca::coll::payload_bytes(step.pieces)), step.step});
    else if (step.kind == tca::coll::OpKind::kAwait)
      steps.push_back({false, step.peer, 0, step.step});
  }
  return steps;
}

}  // namespace tca_sim
