// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The steps of tca's own collectives as one rank runs them: the algorithms of the library's
// schedules (who sends how many bytes to whom at which step, who waits for whom), without their
// places and reductions. A replay uses them for collectives whose steps a GPU program ran, which
// a trace records only as a whole (coll_begin ... steps=device).
#pragma once

#include <string>
#include <vector>

namespace tca_sim {

struct CollectiveStep {
  bool send = false;  // false: wait for the message of `peer` at `step`
  int peer = 0;       // a position: rank r is position r (the library's default mapping)
  double bytes = 0;   // send only
  int step = 0;       // the step number; a send and its wait share it
};

// `op` "allreduce" (`bytes` the vector) or "allgather" (`bytes` the whole result), `algorithm`
// ring, neighbor_exchange, recursive_doubling, dissemination or direct, `ranks` >= 1, `me` the
// position. Throws Error naming what does not fit (an odd count for neighbor exchange, ...).
std::vector<CollectiveStep> collective_steps(const std::string& op, const std::string& algorithm,
                                             double bytes, int ranks, int me);

}  // namespace tca_sim
