// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca calls in tca-bfs: a failure becomes an Error naming the call and tca's own explanation.
#pragma once

#include <tca/tca.h>

#include <string>

#include "common.h"
#include "tca_harness/check.h"

namespace bfs {

inline void check_tca(tcaResult result, const char* call) {
  if (result != TCA_SUCCESS) throw Error(tca_harness::describe_failure(result, call));
}

}  // namespace bfs
