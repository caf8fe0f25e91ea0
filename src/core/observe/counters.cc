// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The counters as JSON (tcaGetCounters, TCA_STATS) and their reset.
#include <fmt/format.h>

#include "core/context.h"
#include "core/desc.h"
#include "core/observe/count.h"
#include "core/observe/observe.h"
#include "core/observe/state.h"

namespace tca::observe {
namespace {

bool empty(const Cell& cell) {
  return cell.transfers == 0 && cell.kicks == 0 && cell.notifications == 0 && cell.waits == 0 &&
         cell.timeouts == 0 && cell.errors == 0;
}

void append_cell(std::string& out, const Cell& cell) {
  fmt::format_to(std::back_inserter(out),
                 "{{\"transfers\":{},\"bytes\":{},\"kicks\":{},\"notifications\":{},"
                 "\"waits\":{},\"timed_waits\":{},\"wait_ns\":{},\"timeouts\":{},\"errors\":{}}}",
                 cell.transfers, cell.bytes, cell.kicks, cell.notifications, cell.waits,
                 cell.timed_waits, cell.wait_ns, cell.timeouts, cell.errors);
}

// A histogram as its non-empty buckets: {"<lower bound ns>": count}.
void append_histogram(std::string& out, const std::array<uint64_t, kBuckets>& buckets) {
  out += '{';
  bool first = true;
  for (int b = 0; b < kBuckets; ++b) {
    if (buckets[b] == 0) continue;
    fmt::format_to(std::back_inserter(out), "{}\"{}\":{}", first ? "" : ",", uint64_t{1} << b,
                   buckets[b]);
    first = false;
  }
  out += '}';
}

void append_peer(std::string& out, int index, const PeerCounters& peer) {
  fmt::format_to(std::back_inserter(out), "{{\"peer\":{}", index);
  static constexpr const char* kDirections[] = {"out", "in"};
  for (int d = 0; d < 2; ++d) {
    fmt::format_to(std::back_inserter(out), ",\"{}\":{{", kDirections[d]);
    bool first = true;
    for (int t = 0; t < kMaxTransports; ++t) {
      if (empty(peer.cells[t][d])) continue;
      fmt::format_to(std::back_inserter(out), "{}\"{}\":", first ? "" : ",",
                     state().transport_names[t]);
      append_cell(out, peer.cells[t][d]);
      first = false;
    }
    out += '}';
  }
  out += ",\"chain_latency_ns\":";
  append_histogram(out, peer.chain_latency);
  out += ",\"wait_latency_ns\":";
  append_histogram(out, peer.wait_latency);
  out += '}';
}

bool peer_empty(const PeerCounters& peer) {
  for (const auto& by_direction : peer.cells)
    for (const Cell& cell : by_direction)
      if (!empty(cell)) return false;
  return true;
}

}  // namespace

namespace {

// The kicks, waits and notifications that the calls left to add (count.h).
void add_unadded(Context& context) {
  context.descriptors().for_each([](uintptr_t, tcaDesc_st& chain) {
    if (chain.unadded_kicks != 0) add_kicks(chain);
  });
  State& s = state();
  for (size_t peer = 0; peer < s.default_cells.size(); ++peer) {
    if (Cell* in = s.default_cells[peer][kIn]; in != nullptr) in->waits += s.waits[peer];
    if (Cell* out = s.default_cells[peer][kOut]; out != nullptr)
      out->notifications += s.notifications[peer];
    s.waits[peer] = s.notifications[peer] = 0;
  }
}

}  // namespace

std::string counters_json(Context& context) {
  add_unadded(context);
  const State& s = state();
  std::string out = fmt::format(
      "{{\"rank\":{},\"size\":{},\"seconds\":{:.6f},\"timed\":\"{}\",\"histogram\":\"log2 buckets, "
      "key = lower "
      "bound in ns\",\"peers\":[",
      context.rank(), context.size(), (now_ns() - s.opened_ns) * 1e-9,
      detail::g_time_all ? std::string("every operation")
                         : fmt::format("one operation in {}", kSampling));
  bool first = true;
  for (size_t p = 0; p < s.peers.size(); ++p) {
    if (peer_empty(s.peers[p])) continue;
    if (!first) out += ',';
    append_peer(out, static_cast<int>(p), s.peers[p]);
    first = false;
  }
  out += "]}";
  return out;
}

void reset_counters(Context& context) {
  add_unadded(context);  // and dropped with the rest
  State& s = state();
  for (PeerCounters& peer : s.peers) peer = PeerCounters();
  s.opened_ns = now_ns();
}

}  // namespace tca::observe
