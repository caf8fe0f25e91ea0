// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The observer's per-process state, shared by its files (counters, dumps, hooks, NVTX).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/desc.h"
#include "tca/tca.h"

namespace tca {
class Context;
class Transport;
}  // namespace tca

namespace tca::observe {

constexpr int kMaxTransports = 8;   // transport ids counted apart (later ids share the last)
constexpr int kBuckets = 40;        // latency buckets: [2^b, 2^(b+1)) ns, the last open-ended
constexpr size_t kMaxTimed = 4096;  // timed chains remembered per channel between drains
constexpr uint32_t kSampling = 64;  // TCA_COUNTERS=1 times one operation in this many
enum Direction { kOut = 0, kIn = 1 };

struct Cell {
  uint64_t transfers = 0;
  uint64_t bytes = 0;
  uint64_t kicks = 0;
  uint64_t notifications = 0;
  uint64_t waits = 0;
  uint64_t wait_ns = 0;      // summed over the timed waits
  uint64_t timed_waits = 0;  // waits whose time was taken (every one with TCA_COUNTERS=timed)
  uint64_t timeouts = 0;
  uint64_t errors = 0;
};

struct PeerCounters {
  std::array<std::array<Cell, 2>, kMaxTransports> cells{};  // [transport id][direction]
  std::array<uint64_t, kBuckets> chain_latency{};           // kick (or put/get) to completion
  std::array<uint64_t, kBuckets> wait_latency{};            // wait begin to notification
};

// A timed kick not yet drained: the fine clock at the kick and the chain's distinct peers.
struct TimedChain {
  uintptr_t token = 0;
  uint64_t timed_ns = 0;
  KickPeers peers;  // count -1: more than fit, looked up by the token at the drain
};

struct WaitState {
  bool active = false;
  int peer = 0;
  int slot = 0;
  uint64_t since_ns = 0;  // coarse clock
  uint64_t timed_ns = 0;  // fine clock where this wait is timed, else 0
};

struct CollectiveState {
  bool active = false;
  const char* kind = "";
  const char* algorithm = "";
  uint64_t bytes = 0;
  uint64_t sequence = 0;  // collectives begun on this rank, this one included
  uint64_t since_ns = 0;
  uint64_t completed = 0;
  uint64_t nvtx_range = 0;
};

struct State {
  bool counters = false;
  bool nvtx = false;
  bool dump_on_timeout = false;
  int dump_signal = 0;
  std::string stats_path;  // as set, %r not yet replaced
  std::string dump_path;   // "" : stderr
  std::vector<PeerCounters> peers;
  // Per peer, the cells of its default transport (notifications and waits); null where none.
  std::vector<std::array<Cell*, 2>> default_cells;
  // Per peer, untimed waits and notifications not yet added to those cells (count.h).
  std::vector<uint64_t> waits;
  std::vector<uint64_t> notifications;
  bool counting_only = false;  // as set at tcaInit (detail::g_counting_only, count.h)
  std::array<std::string, kMaxTransports> transport_names{};
  std::array<std::vector<TimedChain>, TCA_DMA_CHANNELS> timed{};
  WaitState wait;
  CollectiveState collective;
  uint64_t opened_ns = 0;
};

enum TimedKind { kTimedKick = 0, kTimedWait = 1, kTimedPutGet = 2 };

// What the hooks read at every call, where inline code reaches it (observe.cc defines it; hidden,
// as libtca's own, so that inline code reads it without the global offset table).
namespace detail {
[[gnu::visibility("hidden")]] extern State g_state;
[[gnu::visibility("hidden")]] extern bool g_counting;  // mirrors State::counters
// TCA_COUNTERS=timed: every operation timed, else one in kSampling.
[[gnu::visibility("hidden")]] extern bool g_time_all;
// Per kind of operation, so that alternating kinds (a kick, then a wait) are each sampled: the
// operations left until the next timed one (one decrement and a branch per operation).
[[gnu::visibility("hidden")]] extern uint32_t g_until_timed[3];
// 1 with TCA_COUNTERS=timed, else kSampling.
[[gnu::visibility("hidden")]] extern uint32_t g_timing_period;
// Channels with timed kicks not yet drained (bit c: channel c), so that a drain looks at once.
[[gnu::visibility("hidden")]] extern uint32_t g_timed_channels;
}  // namespace detail
static_assert(TCA_DMA_CHANNELS <= 32, "g_timed_channels has a bit per channel");

inline State& state() { return detail::g_state; }
// Whether this operation is timed (all with TCA_COUNTERS=timed, else one in kSampling of its kind).
inline bool sampled(TimedKind kind) {
  if (__builtin_expect(--detail::g_until_timed[kind] != 0, 1)) return false;
  detail::g_until_timed[kind] = detail::g_timing_period;
  return true;
}
uint64_t now_ns();  // observe.h
// The fine clock where the operation is timed, else 0 (inline: the common answer is 0).
inline uint64_t timer_start(TimedKind kind) {
  return detail::g_counting && sampled(kind) ? now_ns() : 0;
}
inline bool timed_kicks_on(int channel) { return (detail::g_timed_channels >> channel) & 1u; }
// A clock of a few milliseconds' resolution that costs little (ages, waits in progress).
uint64_t coarse_ns();
// The coarse clock as last read, for ages in dumps at the cost of a load: refreshed once in
// kRecentUses calls, so a kicked chain's age may leave out the time of up to that many earlier
// operations, or count a pause of this rank just before its kick.
constexpr uint32_t kRecentUses = 16;
namespace detail {
[[gnu::visibility("hidden")]] extern uint64_t g_recent_ns;
[[gnu::visibility("hidden")]] extern uint32_t g_recent_uses;
}  // namespace detail
inline uint64_t recent_ns() {
  if (++detail::g_recent_uses % kRecentUses == 0) detail::g_recent_ns = coarse_ns();
  return detail::g_recent_ns;
}
// The counters' index of `transport` (its id, clamped); records its name.
int transport_index(const Transport* transport);
int bucket_of(uint64_t ns);
// `path` with %r replaced by `rank`; a path without %r is a folder that gets rank-R.<suffix>.
std::string rank_path(const std::string& path, int rank, const char* suffix);

// Writes the dump where TCA_DUMP_FILE says (stderr where unset), naming `reason`.
void dump_to_setting(Context& context, const char* reason);

// NVTX (nvtx.cc): no-ops where the build has no nvtx3 or TCA_NVTX is off (a load and a branch
// here; g_nvtx mirrors State::nvtx).
[[gnu::visibility("hidden")]] extern bool g_nvtx;
void nvtx_push_on(const char* what, uint32_t color);
void nvtx_pop_on();
inline void nvtx_push(const char* what, uint32_t color) {
  if (g_nvtx) nvtx_push_on(what, color);
}
inline void nvtx_pop() {
  if (g_nvtx) nvtx_pop_on();
}
uint64_t nvtx_start(const char* what, uint32_t color);
void nvtx_end(uint64_t range);
constexpr uint32_t kColorKick = 0xff2e7d32;
constexpr uint32_t kColorWait = 0xffc62828;
constexpr uint32_t kColorNotify = 0xff1565c0;
constexpr uint32_t kColorCollective = 0xff6a1b9a;
constexpr uint32_t kColorPhase = 0xffef6c00;

}  // namespace tca::observe
