// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tuning/rules.h"

#include <fmt/format.h>

#include "tuning/engine_choice.h"

namespace tca::tuning {

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
const std::vector<AlgorithmRule>& algorithm_rules() {
  static const std::vector<AlgorithmRule> rules = {
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
  return rules;
}

namespace {

void list_algorithms(std::vector<ListedRule>* out) {
  for (const AlgorithmRule& rule : algorithm_rules()) {
    const std::string ranks =
        rule.max_ranks == kAnyRanks ? "any ranks" : fmt::format("ranks <= {}", rule.max_ranks);
    out->push_back({"collective algorithm",
                    fmt::format("{} {}, {}", rule.memory == TCA_MEM_GPU ? "gpu" : "cpu",
                                rule.kind == TCA_COLL_ALLREDUCE ? "allreduce" : "allgather", ranks),
                    rule.max_bytes, tcaCollAlgorithmName(rule.algorithm)});
  }
}

void list_gpu_collectives(std::vector<ListedRule>* out) {
  const char* protocol = "gpu collective protocol";
  out->push_back({protocol, "allreduce", kInlineMaxAllreduceBytes, "inline"});
  out->push_back({protocol, "allreduce", kUnlimited, "simple"});
  out->push_back({protocol, "allgather", kInlineMaxAllgatherBytes, "inline"});
  out->push_back({protocol, "allgather", kUnlimited, "simple"});
  const char* channels = "gpu collective channels";
  out->push_back({channels, "inline", kUnlimited,
                  fmt::format("result / {} B, 1 to {}", kInlineBytesPerChannel, kMaxChannels)});
  out->push_back({channels, "simple", kUnlimited,
                  fmt::format("result / {} B, 1 to {}", kSimpleBytesPerChannel, kMaxChannels)});
  const char* threads = "gpu collective threads";
  out->push_back({threads, "simple", kUnlimited, std::to_string(kSimpleThreads)});
  out->push_back(
      {threads, "inline, result per channel", kTinyBytesPerChannel, std::to_string(kTinyThreads)});
  out->push_back(
      {threads, "inline, result per channel", kUnlimited, std::to_string(kInlineThreads)});
}

void list_engines(std::vector<ListedRule>* out) {
  const char* engine = "cuda engine";
  out->push_back({engine, "rows narrower than 512 B", kUnlimited, "sm"});
  out->push_back({engine, "calibrated pair", kUnlimited,
                  "the faster at the nearest calibrated size below (tcaCudaCalibration)"});
  out->push_back({engine, "uncalibrated pair", kDefaultCrossover - 1, "sm"});
  out->push_back({engine, "uncalibrated pair", kUnlimited, "copy engine"});
  static_assert(kNarrowRowBytes == 512, "the listing names the narrow-row width");
}

void list_transports(std::vector<ListedRule>* out) {
  out->push_back({"transport", "one transport reaches the peer", kUnlimited, "that one"});
  out->push_back({"transport", "several reach the peer", kUnlimited,
                  "the fastest at the start-up ping-pong's nearest size below (tcaAutoTransport)"});
}

}  // namespace

const std::vector<ListedRule>& listed_rules() {
  static const std::vector<ListedRule> rules = [] {
    std::vector<ListedRule> all;
    list_transports(&all);
    list_algorithms(&all);
    list_gpu_collectives(&all);
    list_engines(&all);
    return all;
  }();
  return rules;
}

}  // namespace tca::tuning
