// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// What a simulation runs: one program of steps per rank (from a trace or from a pattern), the
// node each rank sits on, and what comes out (the run's time and its phases).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fabric.h"

namespace tca_sim {

struct Message {
  int src_rank = -1;  // -1: the rank whose program it is (a get names the remote source)
  int dst_rank = 0;
  double bytes = 0;
  MemKind src_kind = MemKind::kCpu;
  MemKind dst_kind = MemKind::kCpu;
  int notify_slot = -1;  // raised at the destination once the data is there
  Op op = Op::kDma;
  std::string path;  // the transport the trace names (cuda.ce, cuda.sm, shm, ...); may be empty
  // A GPU program's step (path cuda.device): the blocks that store it (0: not recorded) and
  // whether it is the inline protocol's (4 bytes of data in every 8-byte store).
  int channels = 0;
  bool inline_protocol = false;
};

struct Step {
  // kDeviceCall: a host-called GPU program's own cost (the fabric's, by the call's form in
  // `name`); kDeviceStep: the program's own work in one step of a collective (the fabric's);
  // kDeviceWork: the program's work beyond its steps, by collective and algorithm (`name`
  // "allgather_ring", ...: the fabric's device_work_<name>).
  enum Kind {
    kCompute,
    kKick,
    kPut,
    kNotify,
    kWait,
    kDrain,
    kBarrier,
    kPhaseBegin,
    kPhaseEnd,
    kDeviceCall,
    kDeviceStep,
    kDeviceWork
  };
  Kind kind = kCompute;
  double seconds = 0;             // kCompute
  std::vector<Message> messages;  // kKick (a chain, in order), kPut (one, the caller waits)
  int peer = 0;                   // kNotify: destination; kWait: source
  int slot = 0;                   // kNotify, kWait
  // phases; kDeviceCall: resident, resident_start, launch or ""; kDeviceWork: "allgather_ring", ...
  std::string name;
};

using Program = std::vector<Step>;

struct Job {
  std::vector<Program> ranks;
  std::vector<int> node_of_rank;  // empty: rank r on node r
  bool register_mode = false;     // tca chains with pre-registered descriptors
};

struct PhaseTotal {
  double seconds = 0;      // summed over the ranks
  long count = 0;          // begin/end pairs, summed over the ranks
  double max_seconds = 0;  // the rank with the most time in the phase
};

struct Result {
  double makespan = 0;  // the last rank's end
  std::vector<double> rank_end;
  std::map<std::string, PhaseTotal> phases;
  double wall_seconds = 0;  // how long the simulation took here
};

// Runs `job` on `fabric` (built for at least as many nodes as the job uses) in SimGrid. Each
// simulation runs in a child process of its own (SimGrid has one engine per process), so any
// number can run one after another. Throws Error with the child's message on failure.
Result simulate(const Fabric& fabric, const Job& job);

}  // namespace tca_sim
