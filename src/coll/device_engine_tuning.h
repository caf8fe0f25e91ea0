// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The shape of a GPU collective's program: its protocol, channels and threads per block, by the
// rules of tuning/collective_choice.h unless the environment overrides them.
#pragma once

#include <cstddef>

#include "tca/tca_coll.h"

namespace tca::coll {

struct DeviceTuning {
  bool inline_protocol = false;
  int channels = 1;  // at most the element count: every channel has an element
  int threads = 1;   // per block (channel)
};

// For a collective of `kind` with `result_bytes` of result and `count` elements (allgather: per
// rank). TCA_COLL_PROTOCOL and TCA_COLL_CHANNELS override the rules; they must be equal on
// every rank.
tcaResult choose_device_tuning(tcaCollKind kind, size_t result_bytes, size_t count,
                               DeviceTuning* out);

}  // namespace tca::coll
