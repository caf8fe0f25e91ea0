// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// What tca tells about itself while it runs: counters per peer x transport x direction with
// latency histograms (TCA_COUNTERS, TCA_STATS), the state of a rank for "who is stuck on what"
// (tcaDumpState, TCA_DUMP_SIGNAL, TCA_DUMP_ON_TIMEOUT) and NVTX ranges (TCA_NVTX).
// Off by default: every hook at the core's dispatch points (kick, drain, notify, wait, put/get,
// collectives) sits behind `observe::on()`, one load and one branch.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "tca/tca.h"

struct tcaDesc_st;

namespace tca {
class Context;
struct Transfer;
}  // namespace tca

namespace tca::observe {

// The observer's globals are libtca's own (hidden): inline code reads them with one
// instruction, not through the global offset table.
[[gnu::visibility("hidden")]] extern bool g_on;  // counters, state tracking or NVTX are wanted
inline bool on() { return __builtin_expect(g_on, false); }

// tcaInit: reads the settings, sizes the counters, installs the dump signal's handler.
tcaResult open(Context& context);
// tcaFinalize: writes TCA_STATS, removes the handler. Safe when nothing was opened.
tcaResult close(Context& context);

// A cheap timestamp in nanoseconds (the TSC where it is invariant, else the steady clock).
uint64_t now_ns();

// ---- hooks (call only where on()) ----
// tcaDescSet where counters are on: the chain's counts per cell and its distinct peers.
void bind(Context& context, tcaDesc_st& chain);
// After a kick: its counts, its time for dumps; `begin`: the fine clock where the kick is timed
// (timer_start), else 0.
void kick(tcaDesc_st& chain, uintptr_t token, uint64_t begin, tcaResult result);
// After a drain of `channel`: a failed one (dump on timeout), a successful one that completes
// timed kicks (their latency).
void drain_failed(Context& context, tcaResult result);
void drain_timed(Context& context, int channel);
// `timed_ns`: the fine clock where the wait is timed (timer_start), else 0. `stamped`: the wait's
// start is read off the coarse clock now (a poll that missed), else at its loop's first
// dump_if_requested (a blocking wait).
void wait_begin(int peer, int slot, uint64_t timed_ns, bool stamped);
// `from` is the sender (the awaited peer unless TCA_ANY_RANK); `arrived` 0 for a failed poll.
void wait_end(Context& context, int peer, int slot, int from, bool arrived, tcaResult result);
void notify(int dst, tcaResult result);
void put_get(Context& context, const Transfer& transfer, bool put, uint64_t begin,
             tcaResult result);
// Collectives (src/coll): which one runs, at which step of its schedule.
void collective_begin(const char* kind, const char* algorithm, uint64_t bytes);
inline void collective_step(uint64_t step);
void collective_end();
// Application phases (tcaTracePhaseBegin/End) as NVTX ranges.
void phase(bool begin, const char* name);

// A dump asked for by the signal is written at the next wait or hook (signal-safe: the handler
// only raises a flag).
[[gnu::visibility("hidden")]] extern volatile int g_dump_requested;
void dump_if_requested(Context& context);
// At the start of each hook: a load and a branch unless a dump was asked for.
inline void dump_if_signalled(Context& context) {
  if (g_dump_requested != 0) dump_if_requested(context);
}

// ---- state ----
// Writes this rank's state as one JSON line (docs/OPERATING.md has the fields).
void dump_state(Context& context, FILE* file, const char* reason);
// What this rank has outstanding, in words, for timeout messages.
std::string outstanding(Context& context);
// A wait timed out or found its peer dead: writes the dump where TCA_DUMP_ON_TIMEOUT=1.
void timed_out(Context& context, const char* what);

// ---- counters ----
// Both first add the kicks and the wait that the calls left to add (count.h).
std::string counters_json(Context& context);
void reset_counters(Context& context);
// Adds a chain's kicks not yet added to its cells.
void add_kicks(tcaDesc_st& chain);
bool counting();

namespace detail {
[[gnu::visibility("hidden")]] extern uint64_t g_collective_step;
}
inline void collective_step(uint64_t step) { detail::g_collective_step = step; }

}  // namespace tca::observe
