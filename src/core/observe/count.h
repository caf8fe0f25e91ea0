// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The counting path, inline where it runs at every call: a kick adds its chain's counts (summed
// per cell by tcaDescSet), a wait its one. With counters alone (no NVTX, no dumps asked for, no
// trace: counting_only()), the API takes the counted_* forms here instead of the observed forms
// of api_observe.cc: a load and a branch more than the plain call, then the counts.
#pragma once

#include <cstdint>

#include "core/context.h"
#include "core/desc.h"
#include "core/observe/state.h"
#include "tca/tca.h"

namespace tca::observe {

namespace detail {
extern bool g_counting_only;
}
inline bool counting_only() { return detail::g_counting_only; }

// Out of line, where a kick or a wait is not the common one.
void kick_failed(const tcaDesc_st& chain);
void kick_timed(tcaDesc_st& chain, uintptr_t token, uint64_t begin);
void wait_timed(Cell& cell, int sender, uint64_t begin);
void wait_failed(Cell& cell, tcaResult result);

// After a kick: one more kick of the chain (its cells get them when the counters are read), its
// time for dumps (the coarse time a timed kick reads: once in 16 kicks), and, where timed, its
// start.
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
  Cell* cell = state().default_cells[sender][kIn];
  if (cell == nullptr) return;
  if (__builtin_expect(result != TCA_SUCCESS, 0)) {
    wait_failed(*cell, result);
    return;
  }
  ++cell->waits;
  if (__builtin_expect(timed, 0)) wait_timed(*cell, sender, begin);
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

tcaResult wait_recv(Context& context, int src_rank, int slot, int* from);  // api_observe.h

namespace detail {
// The sender of the last untimed wait that arrived, not yet added to its cell (-1: none): a wait
// returns at once, and its count is added before the next wait spins or the counters are read.
extern int g_unadded_wait;
}  // namespace detail

inline void add_unadded_wait() {
  const int sender = detail::g_unadded_wait;
  if (sender < 0) return;
  detail::g_unadded_wait = -1;
  count_wait(sender, 0, false, TCA_SUCCESS);
}

// A blocking wait; where a poll of the same kind goes on (its time counts from its first miss),
// the observed form.
inline tcaResult counted_wait(Context& context, int src_rank, int slot, int* from) {
  if (__builtin_expect(state().wait.active, 0)) return wait_recv(context, src_rank, slot, from);
  add_unadded_wait();
  const uint64_t begin = sampled(kTimedWait) ? now_ns() : 0;
  int sender = src_rank;
  const tcaResult result = context.wait_notification(src_rank, slot, &sender);
  if (result == TCA_SUCCESS && from != nullptr) *from = sender;
  const int counted = result == TCA_SUCCESS && sender >= 0 ? sender : src_rank;
  if (__builtin_expect(result == TCA_SUCCESS && begin == 0, 1))
    detail::g_unadded_wait = counted;
  else
    count_wait(counted, begin, begin != 0, result);
  return result;
}

// A notification sent to `dst_rank` (or its failure).
inline void count_notify(int dst_rank, tcaResult result) {
  Cell* cell = state().default_cells[dst_rank][kOut];
  if (cell != nullptr) ++(result == TCA_SUCCESS ? cell->notifications : cell->errors);
}

inline tcaResult counted_notify(Context& context, int dst_rank, int slot) {
  const tcaResult result = context.notify(dst_rank, slot);
  count_notify(dst_rank, result);
  return result;
}

}  // namespace tca::observe
