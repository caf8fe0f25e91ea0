// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The fixed rules of the choices by size, in one place: the collective algorithm table, the GPU
// collectives' protocol, channel and thread thresholds, and (tuning/engine_choice.h) the CUDA
// transport's defaults. listed_rules() gives all of them as text for tcaGetChoiceRule
// (tca-info --choices); the measured choices (transport, copy engine or SMs per GPU pair) are
// listed by tcaAutoTransport and tcaCudaCalibration.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tca/tca_coll.h"

namespace tca::tuning {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;

// ---- the collective algorithm (TCA_COLL_AUTO): the first rule that fits wins ----
struct AlgorithmRule {
  tcaMemKind memory;
  tcaCollKind kind;
  int max_ranks;     // rules for at most this many ranks
  size_t max_bytes;  // of the result (allgather: every rank's data together)
  tcaCollAlgorithm algorithm;
};
constexpr size_t kUnlimited = SIZE_MAX;
constexpr int kAnyRanks = INT_MAX;
const std::vector<AlgorithmRule>& algorithm_rules();

// ---- GPU collectives (coll/device_engine.cc) ----
// Results up to these sizes move inline; a channel per this much of the result, up to
// kMaxChannels (tools/device/coll_tune.sh on 4 H200s, docs/COLLECTIVES.md: a block moves
// only about 30 GB/s, so even a few MiB want every channel; an allgather's inline steps beat
// bulk stores up to 2 MiB, an allreduce's, which send the whole vector, up to 512 KiB).
constexpr size_t kInlineMaxAllreduceBytes = 512 * kKiB;
constexpr size_t kInlineMaxAllgatherBytes = 2048 * kKiB;
constexpr size_t kInlineBytesPerChannel = 4 * kKiB;
constexpr size_t kSimpleBytesPerChannel = 16 * kKiB;
constexpr int kMaxChannels = 64;
// Threads per block: bulk copies need many stores in flight (64 blocks of 1024 moved 64 MiB
// about a fifth faster than 32 of 512 on H200s); inline messages of a few KiB per channel want
// 512; a few bytes are fastest with few threads to synchronize (one double: 2.9 µs per
// graph-replayed allreduce with 128 threads, 3.2 with 512).
constexpr int kSimpleThreads = 1024;
constexpr int kInlineThreads = 512;
constexpr int kTinyThreads = 128;
constexpr size_t kTinyBytesPerChannel = 1 * kKiB;

// ---- the listing ----
// One rule as text: of choice `choice`, in case `when`, for sizes up to `max_bytes`
// (kUnlimited: any), `pick`. Within a choice and case the first rule that fits wins.
struct ListedRule {
  std::string choice;
  std::string when;
  uint64_t max_bytes;
  std::string pick;
};
const std::vector<ListedRule>& listed_rules();

}  // namespace tca::tuning
