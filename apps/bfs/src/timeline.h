// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Where the time of a search goes: computation and the three communications of the PEACH3
// paper's BFS (COMM.FLAG, COMM.OUT, COMM.TREE), in total and per level.
//
// A Timeline is a sequence of marks; the time between one mark and the one before it belongs to
// the phase (and level) the later mark names. The host form reads the wall clock at each mark;
// the GPU form records a CUDA event in the engine's stream, so that work only enqueued is timed
// where it runs, without synchronizing (timeline_cuda.cu).
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <vector>

namespace bfs {

enum class Phase { kCompute = 0, kFlag = 1, kOut = 2, kTree = 3 };
constexpr int kPhases = 4;
const char* phase_name(Phase phase);  // "compute", "flag", "out", "tree"

using PhaseSeconds = std::array<double, kPhases>;

class Timeline {
 public:
  virtual ~Timeline() = default;
  virtual void start() = 0;                       // the timeline begins
  virtual void mark(Phase phase, int level) = 0;  // the time since the previous mark
  // A segment measured otherwise (the GPU engine's CUDA graphs time their own nodes).
  void add(Phase phase, int level, double seconds) { added_.push_back({phase, level, seconds}); }
  // Waits for every mark and sums the segments: per phase, and per level (levels.size() is one
  // more than the highest level marked).
  virtual void collect(PhaseSeconds& total, std::vector<PhaseSeconds>& levels) = 0;

 protected:
  struct Added {
    Phase phase;
    int level;
    double seconds;
  };
  // Adds the added segments into the sums (and forgets them).
  void add_into(PhaseSeconds& total, std::vector<PhaseSeconds>& levels);
  std::vector<Added> added_;
};

class HostTimeline final : public Timeline {
 public:
  void start() override;
  void mark(Phase phase, int level) override;
  void collect(PhaseSeconds& total, std::vector<PhaseSeconds>& levels) override;

 private:
  struct Mark {
    std::chrono::steady_clock::time_point at;
    Phase phase;
    int level;
  };
  std::chrono::steady_clock::time_point started_;
  std::vector<Mark> marks_;
};

// Sums segments [previous mark, mark) given as seconds since start.
void sum_segments(const std::vector<double>& seconds, const std::vector<Phase>& phases,
                  const std::vector<int>& marked_levels, PhaseSeconds& total,
                  std::vector<PhaseSeconds>& levels);

}  // namespace bfs
