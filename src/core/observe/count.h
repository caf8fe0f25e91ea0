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
extern bool g_counting_only;
// Per peer: waits that arrived untimed, and notifications sent, not yet added to the cells of the
// peer's default transport (State::waits, State::notifications).
extern uint64_t* g_waits;
extern uint64_t* g_notifications;
}  // namespace detail
inline bool counting_only() { return detail::g_counting_only; }

// Out of line, where a kick or a wait is not the common one.
void kick_failed(const tcaDesc_st& chain);
void kick_timed(tcaDesc_st& chain, uintptr_t token, uint64_t begin);
void wait_timed(Cell& cell, int sender, uint64_t begin);
void wait_failed(Cell& cell, tcaResult result);

// After a kick: one more kick of the chain, its time for dumps (the time a timed kick reads: once
// in 16 kicks), and, where timed, its start.
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

inline tcaResult counted_start(Context& context, tcaDesc_st& chain, uintptr_t token) {
  const uint64_t begin = sampled(kTimedKick) ? now_ns() : 0;
  const tcaResult result = desc_start(context, chain);
  count_kick(chain, token, begin, result);
  return result;
}

void drain_failed(Context& context, tcaResult result);  // observe.h
void drain_timed(Context& context, int channel);

inline tcaResult counted_drain(Context& context, int channel) {
  const tcaResult result = context.wait_channel(channel);
  if (__builtin_expect(result != TCA_SUCCESS, 0))
    drain_failed(context, result);
  else if (__builtin_expect(timed_kicks_on(channel), 0))
    drain_timed(context, channel);
  return result;
}

inline tcaResult counted_wait(Context& context, int src_rank, int slot, int* from) {
  const uint64_t begin = sampled(kTimedWait) ? now_ns() : 0;
  int sender = src_rank;  // where it arrives, the rank it came from
  const tcaResult result = context.wait_notification(src_rank, slot, &sender);
  if (result == TCA_SUCCESS && from != nullptr) *from = sender;
  count_wait(result == TCA_SUCCESS ? sender : src_rank, begin, begin != 0, result);
  return result;
}

inline tcaResult counted_notify(Context& context, int dst_rank, int slot) {
  const tcaResult result = context.notify(dst_rank, slot);
  count_notify(dst_rank, result);
  return result;
}

}  // namespace tca::observe
