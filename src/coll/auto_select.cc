// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// TCA_COLL_AUTO: the algorithm by collective, rank count and result size. The rules, from
// measurements with tca-coll (docs/COLLECTIVES.md shows them), are in tuning/rules.cc.
#include "coll/collective.h"
#include "coll/status.h"
#include "tuning/collective_choice.h"

namespace tca::coll {

tcaResult resolve_algorithm(tcaCollKind kind, tcaMemKind memory, size_t result_bytes, int ranks,
                            tcaCollAlgorithm requested, tcaCollAlgorithm* resolved) {
  if (requested == TCA_COLL_AUTO)
    TCA_CHECK(tcaCollChooseAlgorithm(kind, memory, result_bytes, ranks, &requested));
  // Neighbor exchange pairs ranks up; with an odd count the ring runs instead.
  if (requested == TCA_COLL_NEIGHBOR_EXCHANGE && ranks % 2 != 0) requested = TCA_COLL_RING;
  *resolved = requested;
  return TCA_SUCCESS;
}

}  // namespace tca::coll

extern "C" tcaResult tcaCollChooseAlgorithm(tcaCollKind kind, tcaMemKind memory, size_t bytes,
                                            int ranks, tcaCollAlgorithm* algorithm) {
  if (algorithm == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "algorithm is NULL");
  if (memory != TCA_MEM_CPU && memory != TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown memory kind {}", static_cast<int>(memory));
  if (kind != TCA_COLL_ALLREDUCE && kind != TCA_COLL_ALLGATHER)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown collective kind {}", static_cast<int>(kind));
  if (ranks < 1) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} ranks", ranks);
  if (tca::tuning::choose_algorithm(kind, memory, bytes, ranks, algorithm)) return TCA_SUCCESS;
  TCA_FAIL(TCA_ERROR_INTERNAL, "no rule for collective kind {} on {} ranks", static_cast<int>(kind),
           ranks);
}
