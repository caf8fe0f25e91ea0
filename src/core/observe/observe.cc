// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The observer's settings, clock, dump signal and the hooks at the core's dispatch points.
#include "core/observe/observe.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "base/trace.h"
#include "core/context.h"
#include "core/desc.h"
#include "core/observe/count.h"
#include "core/observe/state.h"

namespace tca::observe {

bool g_on = false;
bool g_nvtx = false;
volatile int g_dump_requested = 0;
namespace detail {
uint64_t g_collective_step = 0;
uint64_t g_recent_ns = 0;
uint32_t g_recent_uses = 0;
bool g_counting = false;
bool g_time_all = false;
uint32_t g_until_timed[3] = {kSampling, kSampling, kSampling};
uint32_t g_timing_period = kSampling;
uint64_t* g_waits = nullptr;
uint64_t* g_notifications = nullptr;
uint32_t g_timed_channels = 0;
bool g_counting_only = false;
State g_state;
}  // namespace detail
using detail::g_state;

namespace {

struct sigaction g_previous_action;

extern "C" void on_dump_signal(int) { g_dump_requested = 1; }

tcaResult read_flag(const char* name, bool* out) {
  std::string value;
  TCA_CHECK(setting_choice(name, &value));
  *out = value == "1";
  return TCA_SUCCESS;
}

tcaResult read_signal(int* out) {
  std::string value;
  TCA_CHECK(setting_choice("TCA_DUMP_SIGNAL", &value));
  *out = value == "usr1"   ? SIGUSR1
         : value == "usr2" ? SIGUSR2
         : value == "urg"  ? SIGURG
         : value == "pwr"  ? SIGPWR
                           : 0;
  return TCA_SUCCESS;
}

}  // namespace

namespace {

uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// The fine clock: the TSC scaled to nanoseconds where it is invariant (a third of the steady
// clock's cost in a VM), else the steady clock. Set at open().
struct FineClock {
  bool tsc = false;
  uint64_t base_ticks = 0;
  uint64_t base_ns = 0;
  uint64_t ns_per_tick_q32 = 0;  // nanoseconds per tick times 2^32 (integer arithmetic only)
};
FineClock g_clock;

#if defined(__x86_64__)
bool invariant_tsc() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  __cpuid(0x80000007, eax, ebx, ecx, edx);
  return (edx & (1u << 8)) != 0;
}

// Ticks per nanosecond against the steady clock over about a millisecond.
FineClock calibrate() {
  FineClock clock;
  if (!invariant_tsc()) return clock;
  const uint64_t ns0 = monotonic_ns();
  const uint64_t ticks0 = __rdtsc();
  uint64_t ns1 = ns0;
  while (ns1 - ns0 < 1000000) ns1 = monotonic_ns();
  const uint64_t ticks1 = __rdtsc();
  if (ticks1 <= ticks0) return clock;
  clock.tsc = true;
  clock.base_ticks = ticks1;
  clock.base_ns = ns1;
  clock.ns_per_tick_q32 = static_cast<uint64_t>(
      std::ldexp(static_cast<double>(ns1 - ns0) / static_cast<double>(ticks1 - ticks0), 32));
  return clock;
}
#else
FineClock calibrate() { return {}; }
#endif

}  // namespace

uint64_t now_ns() {
#if defined(__x86_64__)
  if (g_clock.tsc) {
    const uint64_t ticks = __rdtsc();
    const uint64_t since = ticks > g_clock.base_ticks ? ticks - g_clock.base_ticks : 0;
    return g_clock.base_ns +
           static_cast<uint64_t>(
               (static_cast<unsigned __int128>(since) * g_clock.ns_per_tick_q32) >> 32);
  }
#endif
  return monotonic_ns();
}

uint64_t coarse_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

int transport_index(const Transport* transport) {
  const int index = transport->id() < kMaxTransports ? transport->id() : kMaxTransports - 1;
  if (g_state.transport_names[index].empty()) g_state.transport_names[index] = transport->name();
  return index;
}

int bucket_of(uint64_t ns) {
  const int bucket = ns == 0 ? 0 : 63 - __builtin_clzll(ns);
  return bucket < kBuckets ? bucket : kBuckets - 1;
}

std::string rank_path(const std::string& path, int rank, const char* suffix) {
  const size_t at = path.find("%r");
  if (at == std::string::npos) return fmt::format("{}/rank-{}.{}", path, rank, suffix);
  std::string out = path;
  out.replace(at, 2, std::to_string(rank));
  return out;
}

namespace {

// Notifications and waits go through the peer's default transport: its cells, once.
void resolve_default_cells(Context& context) {
  for (int peer = 0; peer < context.size(); ++peer) {
    const Transport* transport = context.default_transport(peer);
    if (transport == nullptr) continue;
    const int t = transport_index(transport);
    for (int direction : {kOut, kIn})
      g_state.default_cells[peer][direction] = &g_state.peers[peer].cells[t][direction];
  }
}

}  // namespace

tcaResult open(Context& context) {
  State fresh;
  std::string count;
  bool stats_set = false;
  TCA_CHECK(setting_choice("TCA_COUNTERS", &count));
  TCA_CHECK(setting_text("TCA_STATS", &fresh.stats_path, &stats_set));
  TCA_CHECK(read_flag("TCA_DUMP_ON_TIMEOUT", &fresh.dump_on_timeout));
  TCA_CHECK(setting_text("TCA_DUMP_FILE", &fresh.dump_path));
  TCA_CHECK(read_signal(&fresh.dump_signal));
  TCA_CHECK(read_flag("TCA_NVTX", &fresh.nvtx));
#if !TCA_HAVE_NVTX
  if (fresh.nvtx) TCA_WARN("TCA_NVTX=1, but this build of tca has no NVTX (nvtx3 not found)");
  fresh.nvtx = false;
#endif
  fresh.counters = count != "0" || stats_set;
  if (fresh.counters && !g_clock.tsc) g_clock = calibrate();
  fresh.peers.resize(context.size());
  fresh.default_cells.resize(context.size());
  fresh.waits.resize(context.size());
  fresh.notifications.resize(context.size());
  fresh.opened_ns = now_ns();
  if (fresh.dump_signal != 0) {
    struct sigaction action {};
    action.sa_handler = on_dump_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(fresh.dump_signal, &action, &g_previous_action) != 0)
      TCA_FAIL(TCA_ERROR_INTERNAL, "cannot install the handler of TCA_DUMP_SIGNAL: {}",
               std::strerror(errno));
  }
  g_state = std::move(fresh);
  if (g_state.counters) resolve_default_cells(context);
  g_nvtx = g_state.nvtx;
  detail::g_counting = g_state.counters;
  // Counters alone: the API counts inline (count.h), without the observed forms' other hooks.
  g_state.counting_only = g_state.counters && !g_state.nvtx && !g_state.dump_on_timeout &&
                          g_state.dump_signal == 0 && !trace::enabled();
  detail::g_counting_only = g_state.counting_only;
  detail::g_waits = g_state.waits.data();
  detail::g_notifications = g_state.notifications.data();
  detail::g_time_all = count == "timed";
  detail::g_timing_period = detail::g_time_all ? 1 : kSampling;
  for (uint32_t& until : detail::g_until_timed) until = detail::g_timing_period;
  detail::g_timed_channels = 0;
  detail::g_recent_ns = coarse_ns();
  g_dump_requested = 0;
  g_on = g_state.counters || g_state.nvtx || g_state.dump_on_timeout || g_state.dump_signal != 0;
  return TCA_SUCCESS;
}

tcaResult close(Context& context) {
  if (g_state.dump_signal != 0) sigaction(g_state.dump_signal, &g_previous_action, nullptr);
  g_on = false;
  g_nvtx = false;
  detail::g_counting = false;
  detail::g_counting_only = false;
  detail::g_time_all = false;
  detail::g_waits = detail::g_notifications = nullptr;
  const std::string stats = g_state.stats_path;
  std::string json = stats.empty() ? std::string() : counters_json(context);
  g_state = State();
  if (stats.empty()) return TCA_SUCCESS;
  const std::string path = rank_path(stats, context.rank(), "stats.json");
  if (stats.find("%r") == std::string::npos) mkdir(stats.c_str(), 0755);
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "TCA_STATS: cannot write {}: {}", path,
             std::strerror(errno));
  json += '\n';
  const bool written = std::fwrite(json.data(), 1, json.size(), file) == json.size();
  if (std::fclose(file) != 0 || !written)
    TCA_FAIL(TCA_ERROR_INTERNAL, "TCA_STATS: writing {} failed", path);
  return TCA_SUCCESS;
}

bool counting() { return g_on && g_state.counters; }

void dump_if_requested(Context& context) {
  // A blocking wait starts without a timestamp (a clock read per wait costs what its counters
  // do); its loop calls this now and then, and the first call stamps it.
  if (g_state.wait.active && g_state.wait.since_ns == 0) g_state.wait.since_ns = coarse_ns();
  if (g_dump_requested == 0) return;
  g_dump_requested = 0;
  dump_to_setting(context, "signal");
}

void timed_out(Context& context, const char* what) {
  if (g_on && g_state.dump_on_timeout) dump_to_setting(context, what);
}

// ---------------------------------------------------------------- hooks

void bind(Context& context, tcaDesc_st& chain) {
  State& s = g_state;
  const int me = context.rank();
  chain.counts.clear();
  chain.peers.clear();
  for (size_t i = 0; i < chain.transfers.size() && i < chain.transfer_transports.size(); ++i) {
    const Transfer& transfer = chain.transfers[i];
    const int direction = transfer.dst->owner != me ? kOut : kIn;
    Cell* cell =
        &s.peers[transfer.peer].cells[transport_index(chain.transfer_transports[i])][direction];
    auto count = std::find_if(chain.counts.begin(), chain.counts.end(),
                              [cell](const ChainCount& c) { return c.cell == cell; });
    if (count == chain.counts.end()) count = chain.counts.insert(count, ChainCount{cell});
    ++count->transfers;
    count->bytes += transfer.width * transfer.count;
    if (transfer.flags & TCA_FLAG_NOTIFY) ++count->notifications;
    if (std::find(chain.peers.begin(), chain.peers.end(), transfer.peer) == chain.peers.end())
      chain.peers.push_back(transfer.peer);
  }
  KickPeers& copied = chain.kick_peers;
  copied = {};
  if (chain.peers.size() > KickPeers::kPeers) {
    copied.count = -1;
  } else {
    copied.count = static_cast<int>(chain.peers.size());
    std::copy(chain.peers.begin(), chain.peers.end(), copied.peers);
  }
}

void kick_failed(const tcaDesc_st& chain) {
  for (const ChainCount& count : chain.counts) count.cell->errors += count.transfers;
}

void add_kicks(tcaDesc_st& chain) {
  const uint64_t kicks = chain.unadded_kicks;
  for (const ChainCount& count : chain.counts) {
    Cell& cell = *count.cell;
    cell.transfers += kicks * count.transfers;
    cell.bytes += kicks * count.bytes;
    cell.notifications += kicks * count.notifications;
    cell.kicks += kicks;
  }
  chain.unadded_kicks = 0;
}

namespace {

// A timed kick that started at `begin`, for its drain.
inline void record_kick(tcaDesc_st& chain, uintptr_t token, uint64_t begin) {
  detail::g_recent_ns = begin;  // the time of the untimed kicks that follow (ages in dumps)
  auto& timed = g_state.timed[chain.channel];
  if (timed.size() >= kMaxTimed) timed.erase(timed.begin());
  timed.push_back(TimedChain{token, begin, chain.kick_peers});
  detail::g_timed_channels |= 1u << chain.channel;
}

}  // namespace

void kick_timed(tcaDesc_st& chain, uintptr_t token, uint64_t begin) {
  record_kick(chain, token, begin);
}

void kick(tcaDesc_st& chain, uintptr_t token, uint64_t begin, tcaResult result) {
  if (result == TCA_SUCCESS) recent_ns();  // refreshed once in 16 where kicks are not timed
  count_kick(chain, token, begin, result);
}

namespace {

// A timed chain with more peers than its entry holds: they are looked up by its token.
[[gnu::noinline]] void add_latency_looked_up(Context& context, uintptr_t token, int bucket) {
  tcaDesc_st* desc = nullptr;
  if (context.descriptors().find(reinterpret_cast<tcaDesc>(token), &desc) != TCA_SUCCESS) {
    clear_last_error();  // freed since: its latency is not known
    return;
  }
  for (int peer : desc->peers) ++g_state.peers[peer].chain_latency[bucket];
}

// The latencies of the timed kicks that a drain of `channel` completed.
inline void record_drain(Context& context, int channel) {
  State& s = g_state;
  auto& timed = s.timed[channel];
  const uint64_t end = now_ns();
  for (const TimedChain& chain : timed) {
    const int bucket = bucket_of(end - chain.timed_ns);
    for (int p = 0; p < chain.peers.count; ++p)
      ++s.peers[chain.peers.peers[p]].chain_latency[bucket];
    if (chain.peers.count < 0) add_latency_looked_up(context, chain.token, bucket);
  }
  timed.clear();
  detail::g_timed_channels &= ~(1u << channel);
}

}  // namespace

void drain_timed(Context& context, int channel) { record_drain(context, channel); }

void drain_failed(Context& context, tcaResult result) {
  if (result == TCA_ERROR_TIMEOUT) timed_out(context, "channel");
}

void wait_begin(int peer, int slot, uint64_t timed_ns, bool stamped) {
  WaitState& wait = g_state.wait;
  if (wait.active && wait.peer == peer && wait.slot == slot) return;  // a poll goes on
  wait = {true, peer, slot, stamped ? coarse_ns() : 0, timed_ns};
  detail::g_counting_only = false;  // the observed forms until this wait ends
}

namespace {

// A timed wait's length into its cell and its sender's histogram.
inline void record_wait(Cell& cell, int sender, uint64_t waited) {
  ++cell.timed_waits;
  cell.wait_ns += waited;
  ++g_state.peers[sender].wait_latency[bucket_of(waited)];
}

}  // namespace

void wait_timed(Cell& cell, int sender, uint64_t begin) {
  record_wait(cell, sender, begin != 0 ? now_ns() - begin : 0);
}

void wait_failed(Cell& cell, tcaResult result) {
  ++(result == TCA_ERROR_TIMEOUT ? cell.timeouts : cell.errors);
}

tcaResult counted_start_timed(Context& context, tcaDesc_st& chain, uintptr_t token) {
  const uint64_t begin = now_ns();
  const tcaResult result = desc_start(context, chain);
  if (result != TCA_SUCCESS) {
    kick_failed(chain);
    return result;
  }
  ++chain.unadded_kicks;
  record_kick(chain, token, begin);
  chain.kicked_ns = begin;
  return TCA_SUCCESS;
}

tcaResult counted_wait_timed(Context& context, int src_rank, int slot, int* from) {
  const uint64_t begin = now_ns();
  int sender = src_rank;
  const tcaResult result = context.wait_notification(src_rank, slot, &sender);
  if (result != TCA_SUCCESS) return counted_wait_failed(src_rank, result);
  const uint64_t waited = now_ns() - begin;
  if (from != nullptr) *from = sender;
  if (Cell* cell = g_state.default_cells[sender][kIn]; cell != nullptr) {
    ++cell->waits;
    record_wait(*cell, sender, waited);
  }
  return TCA_SUCCESS;
}

tcaResult counted_wait_any(Context& context, int slot, int* from) {
  int sender = TCA_ANY_RANK;  // where it arrives, the rank it came from
  const tcaResult result = context.wait_notification(TCA_ANY_RANK, slot, &sender);
  if (result != TCA_SUCCESS) return counted_wait_failed(TCA_ANY_RANK, result);
  if (from != nullptr) *from = sender;
  ++detail::g_waits[sender];
  return TCA_SUCCESS;
}

namespace {

[[gnu::noinline, gnu::cold]] tcaResult counted_wait_from_failed(int src_rank, tcaResult result) {
  --detail::g_waits[src_rank];
  return counted_wait_failed(src_rank, result);
}

}  // namespace

// From a named rank: the sender is that rank (which the wait writes to `from`). It is counted
// before the wait, while the notification is still on its way; a failed wait takes it back.
tcaResult counted_wait_from(Context& context, int src_rank, int slot, int* from) {
  ++detail::g_waits[src_rank];
  const tcaResult result = context.wait_notification(src_rank, slot, from);
  if (__builtin_expect(result != TCA_SUCCESS, 0)) return counted_wait_from_failed(src_rank, result);
  return TCA_SUCCESS;
}

tcaResult counted_wait_failed(int src_rank, tcaResult result) {
  count_wait(src_rank, 0, false, result);
  return result;
}

void counted_drain_rest(Context& context, int channel, tcaResult result) {
  if (result != TCA_SUCCESS)
    drain_failed(context, result);
  else if (timed_kicks_on(channel))
    record_drain(context, channel);
}

void wait_end(Context& context, int peer, int slot, int from, bool arrived, tcaResult result) {
  State& s = g_state;
  if (result == TCA_SUCCESS && !arrived) {  // a poll that found nothing: the wait goes on
    const bool going_on = s.wait.active && s.wait.peer == peer && s.wait.slot == slot;
    if (!going_on) wait_begin(peer, slot, timer_start(kTimedWait), true);
    return;
  }
  if (result == TCA_ERROR_PEER_FAILED) timed_out(context, "peer failed");  // the wait shows
  const bool going_on = s.wait.active && s.wait.peer == peer && s.wait.slot == slot;
  // A wait timed from its start, or (a poll that found its notification at once) of no length.
  const bool timed = going_on ? s.wait.timed_ns != 0 : s.counters && sampled(kTimedWait);
  const uint64_t begin = going_on ? s.wait.timed_ns : 0;
  s.wait.active = false;
  detail::g_counting_only = s.counting_only;
  if (!s.counters) return;
  count_wait(result == TCA_SUCCESS && from >= 0 ? from : peer, begin, timed, result);
}

void notify(int dst, tcaResult result) {
  if (g_state.counters) count_notify(dst, result);
}

void put_get(Context& context, const Transfer& transfer, bool put, uint64_t begin,
             tcaResult result) {
  if (!g_state.counters) return;
  Transport* transport = nullptr;
  if (context.transport_for(TCA_PATH_AUTO, transfer, &transport) != TCA_SUCCESS) {
    clear_last_error();
    return;
  }
  PeerCounters& peer = g_state.peers[transfer.peer];
  Cell& cell = peer.cells[transport_index(transport)][put ? kOut : kIn];
  if (result != TCA_SUCCESS) {
    ++(result == TCA_ERROR_TIMEOUT ? cell.timeouts : cell.errors);
    return;
  }
  ++cell.transfers;
  cell.bytes += transfer.width * transfer.count;
  if (begin != 0) ++peer.chain_latency[bucket_of(now_ns() - begin)];
}

void collective_begin(const char* kind, const char* algorithm, uint64_t bytes) {
  CollectiveState& c = g_state.collective;
  c.active = true;
  c.kind = kind;
  c.algorithm = algorithm;
  c.bytes = bytes;
  c.since_ns = recent_ns();
  ++c.sequence;
  detail::g_collective_step = 0;
  if (g_state.nvtx) c.nvtx_range = nvtx_start(kind, kColorCollective);
}

void collective_end() {
  CollectiveState& c = g_state.collective;
  if (!c.active) return;
  c.active = false;
  ++c.completed;
  if (g_state.nvtx) nvtx_end(c.nvtx_range);
}

void phase(bool begin, const char* name) {
  if (!g_state.nvtx) return;
  if (begin)
    nvtx_push(name, kColorPhase);
  else
    nvtx_pop();
}

}  // namespace tca::observe
