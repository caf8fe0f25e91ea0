// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The collectives' choices by size: the algorithm TCA_COLL_AUTO runs (by collective, memory,
// rank count and result size), and for GPU collectives the protocol, the channel count and the
// threads per channel. All are fixed rules from measurements (docs/COLLECTIVES.md); the
// settings TCA_COLL_ALGORITHM, TCA_COLL_PROTOCOL and TCA_COLL_CHANNELS override them.
#pragma once

#include <cstddef>

#include "tca/tca_coll.h"

namespace tca::tuning {

// The algorithm of the first rule that fits; false where none does (an unknown kind).
bool choose_algorithm(tcaCollKind kind, tcaMemKind memory, size_t result_bytes, int ranks,
                      tcaCollAlgorithm* algorithm);

// GPU collectives: whether a result of `result_bytes` moves inline (else by simple stores).
bool gpu_inline_protocol(tcaCollKind kind, size_t result_bytes);
// The channels for a result of `result_bytes`, before the cap at one element per channel.
size_t gpu_channels(size_t result_bytes, bool inline_protocol);
// Threads per channel's block, by protocol and the result bytes each channel carries.
int gpu_threads(bool inline_protocol, size_t bytes_per_channel);

}  // namespace tca::tuning
