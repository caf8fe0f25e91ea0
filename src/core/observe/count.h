// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The counting path, inline where it runs at every call. A kick adds one to its chain's kicks (the
// chain's transfers, bytes and notifications per cell are summed by tcaDescSet), a wait or a
// notification one to its peer's tally; both reach the cells when the counters are read or reset
// (counters.cc), or the chain is bound again or freed. With counters alone (no NVTX, no dumps
// asked for, no trace: counting_only()), the API takes the counted_* forms here instead of the
// observed forms of api_observe.cc: a few instructions more than the plain call.
#pragma once

#include <cstdint>

#include "core/context.h"
#include "core/desc.h"
#include "core/observe/state.h"
#include "tca/tca.h"

namespace tca::observe {

namespace detail {
// Counters alone, and no poll's wait going on (its time counts from its first miss, which the
// observed forms keep: a poll that misses clears this until its wait ends).
[[gnu::visibility("hidden")]] extern bool g_counting_only;
// Per peer: waits that arrived untimed, and notifications sent, not yet added to the cells of the
// peer's default transport (State::waits, State::notifications).
[[gnu::visibility("hidden")]] extern uint64_t* g_waits;
[[gnu::visibility("hidden")]] extern uint64_t* g_notifications;
}  // namespace detail
inline bool counting_only() { return detail::g_counting_only; }

// Out of line, where a kick or a wait is not the common one.
void kick_failed(const tcaDesc_st& chain);
void kick_timed(tcaDesc_st& chain, uintptr_t token, uint64_t begin);
void wait_timed(Cell& cell, int sender, uint64_t begin);
void wait_failed(Cell& cell, tcaResult result);
// The counted forms' uncommon cases: a timed kick or wait (the whole call), a failed wait's
// count, a drain that failed or may complete timed kicks.
tcaResult counted_start_timed(Context& context, tcaDesc_st& chain, uintptr_t token);
tcaResult counted_wait_timed(Context& context, int src_rank, int slot, int* from);
tcaResult counted_wait_failed(int src_rank, tcaResult result);
void counted_drain_rest(Context& context, int channel, tcaResult result);

// After a kick: one more kick of the chain, its time for dumps (the time a timed kick reads: once
// in 64 kicks), and, where timed, its start.
inline void count_kick(tcaDesc_st& chain, uintptr_t token, uint64_t begin, tcaResult result) {
  if (__builtin_expect(result != TCA_SUCCESS, 0)) {
    kick_failed(chain);
    return;
  }
  ++chain.unadded_kicks;
  if (__builtin_expect(begin != 0, 0)) kick_timed(chain, token, begin);
  chain.kicked_ns = detail::g_recent_ns;
}

// A wait that ended with `result`, for a notification from `sender` where it succeeded;
// `begin`: the fine clock at its start where it is timed, else 0; `timed`: its time is taken.
inline void count_wait(int sender, uint64_t begin, bool timed, tcaResult result) {
  if (sender < 0) return;
  if (__builtin_expect(result == TCA_SUCCESS && !timed, 1)) {
    ++detail::g_waits[sender];
    return;
  }
  Cell* cell = state().default_cells[sender][kIn];
  if (cell == nullptr) return;
  if (result != TCA_SUCCESS) {
    wait_failed(*cell, result);
    return;
  }
  ++cell->waits;
  wait_timed(*cell, sender, begin);
}

// A notification sent to `dst_rank` (or its failure).
inline void count_notify(int dst_rank, tcaResult result) {
  if (__builtin_expect(result == TCA_SUCCESS, 1)) {
    ++detail::g_notifications[dst_rank];
    return;
  }
  Cell* cell = state().default_cells[dst_rank][kOut];
  if (cell != nullptr) ++cell->errors;
}

// An untimed kick adds one to its chain's kicks; a timed one (one in 64) runs out of line.
inline tcaResult counted_start(Context& context, tcaDesc_st& chain, uintptr_t token) {
  if (__builtin_expect(sampled(kTimedKick), 0)) return counted_start_timed(context, chain, token);
  const tcaResult result = desc_start(context, chain);
  count_kick(chain, token, 0, result);
  return result;
}

// A drain: one test of the timed kicks of any channel (their channel is looked at out of line).
inline tcaResult counted_drain(Context& context, int channel) {
  const tcaResult result = context.wait_channel(channel);
  if (__builtin_expect(result != TCA_SUCCESS || detail::g_timed_channels != 0, 0))
    counted_drain_rest(context, channel, result);
  return result;
}

// An untimed wait adds one to its sender's tally; a timed one (one in 64) runs out of line. The
// API's call reaches the wait's own function by a jump (its frame already left), and that
// function's frame is small: after the notification arrives, the rank's path back to its caller
// is the result's test and a return, as without counters.
tcaResult counted_wait_any(Context& context, int slot, int* from);
tcaResult counted_wait_from(Context& context, int src_rank, int slot, int* from);
inline tcaResult counted_wait(Context& context, int src_rank, int slot, int* from) {
  if (__builtin_expect(sampled(kTimedWait), 0))
    return counted_wait_timed(context, src_rank, slot, from);
  if (__builtin_expect(src_rank == TCA_ANY_RANK, 0)) return counted_wait_any(context, slot, from);
  return counted_wait_from(context, src_rank, slot, from);
}

inline tcaResult counted_notify(Context& context, int dst_rank, int slot) {
  const tcaResult result = context.notify(dst_rank, slot);
  count_notify(dst_rank, result);
  return result;
}

}  // namespace tca::observe
