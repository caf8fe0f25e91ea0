// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A rank's state for "who is stuck on what": one JSON line per dump (tcaDumpState, the dump
// signal, TCA_DUMP_ON_TIMEOUT) and the summary that timeout messages carry.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>

#include "base/error.h"
#include "base/log.h"
#include "base/region.h"
#include "core/cells.h"
#include "core/context.h"
#include "core/desc.h"
#include "core/observe/observe.h"
#include "core/observe/state.h"

namespace tca::observe {
namespace {

// A chain bound to a channel with a run kicked there and not yet drained.
struct Outstanding {
  uintptr_t token = 0;
  const tcaDesc_st* desc = nullptr;
};

std::vector<Outstanding> outstanding_chains(Context& context) {
  std::vector<Outstanding> out;
  context.descriptors().for_each([&](uintptr_t token, const tcaDesc_st& desc) {
    if (desc.channel < 0) return;
    const auto& runs = context.runs_in_flight(desc.channel);
    for (const auto& run : desc.runs)
      if (std::find(runs.begin(), runs.end(), run.get()) != runs.end()) {
        out.push_back({token, &desc});
        return;
      }
  });
  return out;
}

// Since the chain's last observed kick; -1 where the observer was off at its kicks. (A kick
// stamped from the fine clock may lie up to a tick of the coarse one after `now`: 0.)
double age_ms(const tcaDesc_st& desc, uint64_t now) {
  if (desc.kicked_ns == 0) return -1;
  return now > desc.kicked_ns ? (now - desc.kicked_ns) * 1e-6 : 0;
}

void append_chain(std::string& out, Context& context, const Outstanding& chain, uint64_t now) {
  const tcaDesc_st& desc = *chain.desc;
  std::vector<int> peers;
  std::vector<std::string> transports;
  std::string notifies;
  uint64_t bytes = 0;
  for (size_t i = 0; i < desc.transfers.size(); ++i) {
    const Transfer& transfer = desc.transfers[i];
    if (std::find(peers.begin(), peers.end(), transfer.peer) == peers.end())
      peers.push_back(transfer.peer);
    if (i < desc.transfer_transports.size()) {
      const std::string name = desc.transfer_transports[i]->name();
      if (std::find(transports.begin(), transports.end(), name) == transports.end())
        transports.push_back(name);
    }
    bytes += transfer.width * transfer.count;
    if (transfer.flags & TCA_FLAG_NOTIFY)
      notifies += fmt::format("{}{{\"peer\":{},\"slot\":{}}}", notifies.empty() ? "" : ",",
                              transfer.dst->owner, transfer.slot);
  }
  const double age = age_ms(desc, now);
  fmt::format_to(std::back_inserter(out),
                 "{{\"chain\":\"{:#x}\",\"channel\":{},\"entries\":{},\"peers\":[{}],"
                 "\"transports\":[\"{}\"],\"bytes\":{},\"notifies\":[{}],\"age_ms\":{}}}",
                 chain.token, desc.channel, desc.transfers.size(), fmt::join(peers, ","),
                 fmt::join(transports, "\",\""), bytes, notifies,
                 age < 0 ? std::string("null") : fmt::format("{:.3f}", age));
  (void)context;
}

std::string notifications_json(Context& context) {
  std::string out;
  for (int peer = 0; peer < context.size(); ++peer)
    for (int slot = 0; slot < TCA_NOTIFY_SLOTS; ++slot) {
      const uint64_t sent = *context.notify_sent_counter(peer, slot);
      const uint64_t received = cell_at(context.control_block(), notify_cell_offset(peer, slot))
                                    ->load(std::memory_order_acquire);
      const uint64_t consumed = *context.notify_consumed_counter(peer, slot);
      if (sent == 0 && received == 0 && consumed == 0) continue;
      fmt::format_to(std::back_inserter(out),
                     "{}{{\"peer\":{},\"slot\":{},\"sent\":{},\"received\":{},\"consumed\":{}}}",
                     out.empty() ? "" : ",", peer, slot, sent, received, consumed);
    }
  return out;
}

std::string dead_peers_json(Context& context) {
  std::string out;
  ErrorKeeper keep;
  for (int peer = 0; peer < context.size(); ++peer)
    if (context.check_peer_alive(peer) == TCA_ERROR_PEER_FAILED)
      out += fmt::format("{}{}", out.empty() ? "" : ",", peer);
  return out;
}

}  // namespace

void dump_state(Context& context, FILE* file, const char* reason) {
  const State& s = state();
  const uint64_t now = coarse_ns();
  std::string out = fmt::format(
      "{{\"tca_state\":1,\"rank\":{},\"size\":{},\"reason\":\"{}\",\"unix_ms\":{},"
      "\"timeout_ms\":{},\"observed\":{}",
      context.rank(), context.size(), reason, static_cast<uint64_t>(std::time(nullptr)) * 1000,
      context.timeout_ms(), on() ? "true" : "false");
  out += ",\"waits\":[";
  if (s.wait.active)
    fmt::format_to(std::back_inserter(out), "{{\"peer\":{},\"slot\":{},\"for_ms\":{:.3f}}}",
                   s.wait.peer, s.wait.slot,
                   s.wait.since_ns != 0 ? (now - s.wait.since_ns) * 1e-6 : 0.0);
  out += "],\"chains\":[";
  std::map<std::string, int> in_flight;
  bool first = true;
  for (const Outstanding& chain : outstanding_chains(context)) {
    if (!first) out += ',';
    append_chain(out, context, chain, now);
    first = false;
    for (Transport* transport : chain.desc->run_transports) ++in_flight[transport->name()];
  }
  out += "],\"in_flight\":{";
  first = true;
  for (const auto& [name, runs] : in_flight) {
    fmt::format_to(std::back_inserter(out), "{}\"{}\":{}", first ? "" : ",", name, runs);
    first = false;
  }
  out += "},\"notifications\":[" + notifications_json(context) + "],\"collective\":";
  if (s.collective.active)
    fmt::format_to(std::back_inserter(out),
                   "{{\"kind\":\"{}\",\"algorithm\":\"{}\",\"bytes\":{},\"sequence\":{},"
                   "\"step\":{},\"for_ms\":{:.3f}}}",
                   s.collective.kind, s.collective.algorithm, s.collective.bytes,
                   s.collective.sequence, detail::g_collective_step,
                   (now - s.collective.since_ns) * 1e-6);
  else
    out += "null";
  fmt::format_to(std::back_inserter(out), ",\"collectives_completed\":{}", s.collective.completed);
  out += ",\"dead_peers\":[" + dead_peers_json(context) + "]}\n";
  std::fwrite(out.data(), 1, out.size(), file);
  std::fflush(file);
}

void dump_to_setting(Context& context, const char* reason) {
  const std::string& setting = state().dump_path;
  if (setting.empty()) {
    dump_state(context, stderr, reason);
    return;
  }
  if (setting.find("%r") == std::string::npos) mkdir(setting.c_str(), 0755);
  const std::string path = rank_path(setting, context.rank(), "dump.json");
  FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    TCA_WARN("TCA_DUMP_FILE: cannot write {}: {}; the state goes to stderr", path,
             std::strerror(errno));
    dump_state(context, stderr, reason);
    return;
  }
  dump_state(context, file, reason);
  std::fclose(file);
}

std::string outstanding(Context& context) {
  std::string out;
  const auto chains = outstanding_chains(context);
  if (chains.empty()) {
    out = "no chains kicked and not drained";
  } else {
    out = fmt::format("{} chain(s) kicked and not drained:", chains.size());
    for (const Outstanding& chain : chains) {
      std::vector<int> peers;
      for (const Transfer& transfer : chain.desc->transfers)
        if (std::find(peers.begin(), peers.end(), transfer.peer) == peers.end())
          peers.push_back(transfer.peer);
      out += fmt::format(" [channel {}, {} entries, peers {}]", chain.desc->channel,
                         chain.desc->transfers.size(), fmt::join(peers, ","));
    }
  }
  const CollectiveState& c = state().collective;
  if (c.active)
    out += fmt::format("; in collective #{} ({} {}, step {})", c.sequence, c.kind, c.algorithm,
                       detail::g_collective_step);
  return out;
}

}  // namespace tca::observe
