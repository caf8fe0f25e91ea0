// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Reads the traces tca writes with TCA_TRACE=DIR (docs/SIM.md: the format) and turns them into
// a job: the time between tca calls becomes compute steps, the calls become kicks, puts,
// notifications, waits, drains, barriers and phase marks, in the order each rank recorded them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "job.h"

namespace tca_sim {

struct TraceEvent {
  uint64_t t = 0;    // ns since the rank's start
  uint64_t dur = 0;  // ns (0 for instants)
  std::string kind;
  std::map<std::string, std::string> fields;
  int line = 0;
};

struct RankTrace {
  std::string file;
  int rank = 0, world = 0;
  std::string host;
  uint64_t start = 0;              // steady clock, ns
  std::vector<TraceEvent> events;  // by time; GPU-timed collectives put in place
  // Host events that fell inside a GPU-timed collective's span (and GPU-timed collectives that
  // began inside another's), placed after it: one line of time per rank holds one at a time.
  long gpu_overlaps = 0;
};

// Parses one file's text; errors name file:line.
RankTrace parse_rank_trace(const std::string& text, const std::string& file);
// Reads DIR/rank-*.trace; every rank of the header's world must be there.
std::vector<RankTrace> read_trace_dir(const std::string& dir);

// Notification slots of the modelled steps of device-run collectives (this plus the step
// number): above any slot a trace can name.
constexpr int kDeviceCollectiveSlots = 1 << 20;

struct TraceJob {
  Job job;
  double measured = 0;  // the recorded run: first event to the last rank's end, s
  std::map<std::string, PhaseTotal> measured_phases;
  bool common_clock = false;  // every rank on one host: ranks aligned on the steady clock
  long transfers = 0, waits = 0, kicks = 0;
  long device_collectives = 0;  // collectives a GPU program ran: their steps are modelled
  long device_unlabelled = 0;   // ... of which without protocol, channels and call (older traces)
  long gpu_timed = 0;           // ... of which stream-ordered, timed on the GPU (call=stream)
  long gpu_overlaps = 0;        // RankTrace::gpu_overlaps, summed
  std::set<std::string> device_programs;  // their "op_algorithm" names (Step::kDeviceWork)
};

// Builds the job: on one host the ranks start where the clock puts them (the earliest first
// event is time 0); across hosts each rank starts at its first event. With `segments`, every
// run of consecutive kicks of one shape (the first transfer's path, memory kinds and bytes) is
// also a phase named `path.skind>dkind.bytes`, from its first kick to the end of the rank's last
// call of that row before a kick of another shape (a wait belongs to the row whose transfer
// raised it): the rows of a trace without phase marks (tca-pingpong).
TraceJob job_from_traces(const std::vector<RankTrace>& traces, bool segments = false);

}  // namespace tca_sim
