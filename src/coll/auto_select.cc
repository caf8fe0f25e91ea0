// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// TCA_COLL_AUTO: the algorithm by collective, rank count and result size, from measurements
// with tca-coll (docs/COLLECTIVES.md shows them). The first rule that fits wins.
#include <climits>

#include "coll/collective.h"
#include "coll/status.h"

namespace {

struct Rule {
  tcaMemKind memory;
  tcaCollKind kind;
  int max_ranks;     // rules for at most this many ranks
  size_t max_bytes;  // of the result (allgather: every rank's data together)
  tcaCollAlgorithm algorithm;
};

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kUnlimited = SIZE_MAX;
constexpr int kAnyRanks = INT_MAX;

// Host memory, measured on the CPU transport (shm, 2-core host: more than 2 ranks are
// oversubscribed). Allreduce: recursive doubling (log2 steps of the whole vector) while latency
// dominates, then the ring's reduce-scatter + allgather (2(n-1)/n of the data per rank).
// Allgather: Bruck's ceil(log2 n) steps were within a few per cent of the best at every size.
// GPU memory, measured with tca-coll on H200s over NVLink (docs/COLLECTIVES.md), at 2 ranks
// and (the rows for more) at 4 and 8: fewest steps while a step costs a signal's latency (an
// allgather's direct exchange is one step: every message in flight at once); for an allreduce,
// recursive doubling's whole vectors, except at the largest inline size, where the direct
// reduce-scatter + allgather (two steps, a fraction of the data) wins; then the neighbor
// exchange's and the ring's halved traffic once the data dominates. The direct exchange's bulk
// form (above 512 KiB) loses to recursive doubling and the ring. At 8 ranks the direct allgather
// holds to 1 MiB and Bruck's to 32 MiB.
constexpr Rule kRules[] = {
    {TCA_MEM_CPU, TCA_COLL_ALLREDUCE, 2, 1 * kKiB, TCA_COLL_RECURSIVE_DOUBLING},
    {TCA_MEM_CPU, TCA_COLL_ALLREDUCE, 2, kUnlimited, TCA_COLL_RING},
    {TCA_MEM_CPU, TCA_COLL_ALLREDUCE, kAnyRanks, 32 * kKiB, TCA_COLL_RECURSIVE_DOUBLING},
    {TCA_MEM_CPU, TCA_COLL_ALLREDUCE, kAnyRanks, kUnlimited, TCA_COLL_RING},
    {TCA_MEM_CPU, TCA_COLL_ALLGATHER, kAnyRanks, kUnlimited, TCA_COLL_DISSEMINATION},
    {TCA_MEM_GPU, TCA_COLL_ALLREDUCE, 2, 256 * kKiB, TCA_COLL_RECURSIVE_DOUBLING},
    {TCA_MEM_GPU, TCA_COLL_ALLREDUCE, 2, kUnlimited, TCA_COLL_RING},
    {TCA_MEM_GPU, TCA_COLL_ALLREDUCE, kAnyRanks, 256 * kKiB, TCA_COLL_RECURSIVE_DOUBLING},
    {TCA_MEM_GPU, TCA_COLL_ALLREDUCE, kAnyRanks, 512 * kKiB, TCA_COLL_DIRECT},
    {TCA_MEM_GPU, TCA_COLL_ALLREDUCE, kAnyRanks, 4 * kMiB, TCA_COLL_RECURSIVE_DOUBLING},
    {TCA_MEM_GPU, TCA_COLL_ALLREDUCE, kAnyRanks, 16 * kMiB, TCA_COLL_NEIGHBOR_EXCHANGE},
    {TCA_MEM_GPU, TCA_COLL_ALLREDUCE, kAnyRanks, kUnlimited, TCA_COLL_RING},
    {TCA_MEM_GPU, TCA_COLL_ALLGATHER, 4, 512 * kKiB, TCA_COLL_DIRECT},
    {TCA_MEM_GPU, TCA_COLL_ALLGATHER, kAnyRanks, 1 * kMiB, TCA_COLL_DIRECT},
    {TCA_MEM_GPU, TCA_COLL_ALLGATHER, 4, 16 * kMiB, TCA_COLL_DISSEMINATION},
    {TCA_MEM_GPU, TCA_COLL_ALLGATHER, kAnyRanks, 32 * kMiB, TCA_COLL_DISSEMINATION},
    {TCA_MEM_GPU, TCA_COLL_ALLGATHER, kAnyRanks, kUnlimited, TCA_COLL_RING},
};

}  // namespace

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
  for (const Rule& rule : kRules) {
    if (rule.memory == memory && rule.kind == kind && ranks <= rule.max_ranks &&
        bytes <= rule.max_bytes) {
      *algorithm = rule.algorithm;
      return TCA_SUCCESS;
    }
  }
  TCA_FAIL(TCA_ERROR_INTERNAL, "no rule for collective kind {} on {} ranks", static_cast<int>(kind),
           ranks);
}
