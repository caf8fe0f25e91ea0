#include "search.h"

#include <chrono>

namespace bfs {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Direction choose_direction(Direction current, const SearchSettings& settings, int64_t frontier,
                           int64_t previous_frontier, int64_t frontier_arcs,
                           int64_t unexplored_arcs, uint64_t vertices) {
  switch (settings.mode) {
    case DirectionMode::kTopDown:
      return Direction::kTopDown;
    case DirectionMode::kBottomUp:
      return Direction::kBottomUp;
    case DirectionMode::kAuto:
      break;
  }
  if (current == Direction::kTopDown) {
    const bool heavy = static_cast<double>(frontier_arcs) >
                       static_cast<double>(unexplored_arcs) / settings.alpha;
    return heavy ? Direction::kBottomUp : Direction::kTopDown;
  }
  const bool small = static_cast<double>(frontier) < static_cast<double>(vertices) / settings.beta;
  return small && frontier < previous_frontier ? Direction::kTopDown : Direction::kBottomUp;
}

SearchResult run_search(Engine& engine, Exchange& exchange, vertex_t root, int64_t root_degree,
                        uint64_t total_arcs, uint64_t vertices, const SearchSettings& settings) {
  SearchResult result;
  result.root = root;
  Timeline& timeline = engine.timeline();
  const auto started = std::chrono::steady_clock::now();
  timeline.start();
  engine.begin_search(root);
  timeline.mark(Phase::kCompute, 0);

  Direction direction = Direction::kTopDown;
  int64_t frontier = 1, previous = 0, frontier_arcs = root_degree;
  int64_t unexplored = static_cast<int64_t>(total_arcs) - root_degree;
  int64_t reached = 1;
  int parity = 0, level = 0;
  for (;;) {
    direction = choose_direction(direction, settings, frontier, previous, frontier_arcs,
                                 unexplored, vertices);
    LevelRecord record;
    record.direction = direction;
    record.frontier = frontier;
    record.frontier_arcs = frontier_arcs;
    result.per_level.push_back(record);
    engine.step(direction, level, parity);
    timeline.mark(Phase::kCompute, level);
    const Counts next = exchange.reduce_counts();
    timeline.mark(Phase::kFlag, level);
    if (next.vertices == 0) break;
    exchange.gather_frontier(parity ^ 1);
    timeline.mark(Phase::kOut, level);
    reached += next.vertices;
    previous = frontier;
    frontier = next.vertices;
    frontier_arcs = next.arcs;
    unexplored -= next.arcs;
    parity ^= 1;
    ++level;
  }
  engine.synchronize();
  result.seconds = since(started);
  result.levels = level + 1;
  result.reached = reached;

  std::vector<PhaseSeconds> per_level;
  timeline.collect(result.phases, per_level);
  for (size_t l = 0; l < per_level.size() && l < result.per_level.size(); ++l)
    result.per_level[l].seconds = per_level[l];

  const auto tree_started = std::chrono::steady_clock::now();
  exchange.gather_tree();
  engine.synchronize();
  result.phases[static_cast<int>(Phase::kTree)] = since(tree_started);
  return result;
}

}  // namespace bfs
