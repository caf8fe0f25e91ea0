// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "engine.h"

#include "tca/tca_trace.h"

namespace bfs {

Counts Engine::run_level(Exchange& exchange, Direction direction, int level, int parity) {
  Timeline& clock = timeline();
  if (level > 0) {
    tcaTracePhaseBegin("COMM.OUT");  // the PEACH3 paper's names (Table 2)
    exchange.gather_frontier(parity);
    tcaTracePhaseEnd("COMM.OUT");
    clock.mark(Phase::kOut, level - 1);  // the frontier the level before produced
  }
  step(direction, level, parity);
  clock.mark(Phase::kCompute, level);
  tcaTracePhaseBegin("COMM.FLAG");
  const Counts counts = exchange.reduce_counts();
  tcaTracePhaseEnd("COMM.FLAG");
  clock.mark(Phase::kFlag, level);
  return counts;
}

}  // namespace bfs
