// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tuning/collective_choice.h"

#include <algorithm>

#include "tuning/rules.h"

namespace tca::tuning {

bool choose_algorithm(tcaCollKind kind, tcaMemKind memory, size_t result_bytes, int ranks,
                      tcaCollAlgorithm* algorithm) {
  for (const AlgorithmRule& rule : algorithm_rules()) {
    if (rule.memory == memory && rule.kind == kind && ranks <= rule.max_ranks &&
        result_bytes <= rule.max_bytes) {
      *algorithm = rule.algorithm;
      return true;
    }
  }
  return false;
}

bool gpu_inline_protocol(tcaCollKind kind, size_t result_bytes) {
  return result_bytes <=
         (kind == TCA_COLL_ALLREDUCE ? kInlineMaxAllreduceBytes : kInlineMaxAllgatherBytes);
}

size_t gpu_channels(size_t result_bytes, bool inline_protocol) {
  const size_t per_channel = inline_protocol ? kInlineBytesPerChannel : kSimpleBytesPerChannel;
  return std::clamp<size_t>(result_bytes / per_channel, 1, kMaxChannels);
}

int gpu_threads(bool inline_protocol, size_t bytes_per_channel) {
  if (!inline_protocol) return kSimpleThreads;
  return bytes_per_channel <= kTinyBytesPerChannel ? kTinyThreads : kInlineThreads;
}

}  // namespace tca::tuning
