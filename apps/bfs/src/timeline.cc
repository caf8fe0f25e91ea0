// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "timeline.h"

#include <algorithm>

namespace bfs {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kCompute:
      return "compute";
    case Phase::kFlag:
      return "flag";
    case Phase::kOut:
      return "out";
    case Phase::kTree:
      return "tree";
  }
  return "?";
}

void sum_segments(const std::vector<double>& seconds, const std::vector<Phase>& phases,
                  const std::vector<int>& marked_levels, PhaseSeconds& total,
                  std::vector<PhaseSeconds>& levels) {
  total.fill(0);
  int highest = -1;
  for (const int level : marked_levels) highest = std::max(highest, level);
  levels.assign(static_cast<size_t>(highest + 1), PhaseSeconds{});
  double previous = 0;
  for (size_t i = 0; i < seconds.size(); ++i) {
    const double segment = seconds[i] - previous;
    previous = seconds[i];
    const int phase = static_cast<int>(phases[i]);
    total[phase] += segment;
    if (marked_levels[i] >= 0) levels[marked_levels[i]][phase] += segment;
  }
}

void Timeline::add_into(PhaseSeconds& total, std::vector<PhaseSeconds>& levels) {
  for (const Added& a : added_) {
    total[static_cast<int>(a.phase)] += a.seconds;
    if (a.level < 0) continue;
    if (levels.size() <= static_cast<size_t>(a.level)) levels.resize(a.level + 1, PhaseSeconds{});
    levels[a.level][static_cast<int>(a.phase)] += a.seconds;
  }
  added_.clear();
}

void HostTimeline::start() {
  marks_.clear();
  added_.clear();
  started_ = std::chrono::steady_clock::now();
}

void HostTimeline::mark(Phase phase, int level) {
  marks_.push_back(Mark{std::chrono::steady_clock::now(), phase, level});
}

void HostTimeline::collect(PhaseSeconds& total, std::vector<PhaseSeconds>& levels) {
  std::vector<double> seconds;
  std::vector<Phase> phases;
  std::vector<int> marked;
  for (const Mark& m : marks_) {
    seconds.push_back(std::chrono::duration<double>(m.at - started_).count());
    phases.push_back(m.phase);
    marked.push_back(m.level);
  }
  sum_segments(seconds, phases, marked, total, levels);
  add_into(total, levels);
}

}  // namespace bfs
