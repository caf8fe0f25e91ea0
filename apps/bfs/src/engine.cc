#include "engine.h"

namespace bfs {

Counts Engine::run_level(Exchange& exchange, Direction direction, int level, int parity) {
  Timeline& clock = timeline();
  if (level > 0) {
    exchange.gather_frontier(parity);
    clock.mark(Phase::kOut, level - 1);  // the frontier the level before produced
  }
  step(direction, level, parity);
  clock.mark(Phase::kCompute, level);
  const Counts counts = exchange.reduce_counts();
  clock.mark(Phase::kFlag, level);
  return counts;
}

}  // namespace bfs
