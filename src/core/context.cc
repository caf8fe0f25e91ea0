// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "core/context.h"

#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "base/wake.h"
#include "core/cells.h"
#include "core/observe/observe.h"
#include "transport/registry.h"

namespace tca {
namespace {

// Same running kernel and same pid namespace: the peer's /proc entries and pids are ours too.
uint64_t machine_hash() {
  char hostname[256] = {};
  gethostname(hostname, sizeof(hostname) - 1);
  std::string identity = hostname;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::string line;
  if (std::getline(boot_id, line)) identity += "/" + line;
  char ns[128] = {};
  if (readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1) > 0) identity += "/" + std::string(ns);
  return std::hash<std::string>{}(identity);
}

tcaResult random_job_key(uint64_t* key) {
  do {
    if (getrandom(key, sizeof(*key), 0) != static_cast<ssize_t>(sizeof(*key)))
      TCA_FAIL(TCA_ERROR_TRANSPORT, "getrandom failed: {}", std::strerror(errno));
  } while (*key == 0);
  return TCA_SUCCESS;
}

tcaResult parse_timeout(const tcaConfig* config, int* timeout_ms) {
  if (config != nullptr && config->timeout_ms < 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "timeout_ms {} is negative", config->timeout_ms);
  if (config != nullptr && config->timeout_ms > 0) {
    *timeout_ms = config->timeout_ms;
    return TCA_SUCCESS;
  }
  int64_t value = *timeout_ms;
  TCA_CHECK(setting_count("TCA_TIMEOUT_MS", &value));
  *timeout_ms = static_cast<int>(value);
  return TCA_SUCCESS;
}

tcaResult parse_transport(const tcaConfig* config, std::string* forced) {
  if (config != nullptr && config->transport != nullptr) {
    *forced = config->transport;
  } else {
    TCA_CHECK(setting_text("TCA_TRANSPORT", forced));
  }
  if (*forced == "auto" || transport_id(forced->c_str()) >= 0) return TCA_SUCCESS;
  std::string known = "auto";
  for (const TransportEntry& entry : transport_registry()) known += std::string(", ") + entry.name;
  TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "transport '{}' is not one of {}", *forced, known);
}

// TCA_HOST_ID splits this machine into hosts: "block:K" puts ranks [0, K) on one host, [K, 2K)
// on the next; "cyclic:K" puts rank r on host r % K; any other text names this rank's host.
tcaResult parse_host_id(int rank, std::string* host) {
  std::string text;
  TCA_CHECK(setting_text("TCA_HOST_ID", &text));
  host->clear();
  if (text.empty()) return TCA_SUCCESS;
  for (const char* form : {"block:", "cyclic:"}) {
    if (text.rfind(form, 0) != 0) continue;
    const std::string count = text.substr(std::strlen(form));
    char* end = nullptr;
    const long k = std::strtol(count.c_str(), &end, 10);
    if (count.empty() || *end != '\0' || k <= 0 || k > INT32_MAX)
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "TCA_HOST_ID='{}': {} needs a positive rank count", text,
               form);
    *host = fmt::format("{}{}", form, form[0] == 'b' ? rank / k : rank % k);
    return TCA_SUCCESS;
  }
  *host = "id:" + text;
  return TCA_SUCCESS;
}

}  // namespace

tcaResult Context::create(const tcaConfig* config, std::unique_ptr<Context>* out) {
  std::unique_ptr<Context> context(new Context());
  TCA_CHECK(context->init(config));
  *out = std::move(context);
  return TCA_SUCCESS;
}

tcaResult Context::init(const tcaConfig* config) {
  // Arguments first: bad input must change nothing, so no collective has started yet.
  InitClock clock;
  std::string forced;
  TCA_CHECK(parse_transport(config, &forced));
  TCA_CHECK(parse_timeout(config, &timeout_ms_));
  TCA_CHECK(make_bootstrap(timeout_ms_, &bootstrap_));
  rank_ = bootstrap_->rank();
  std::string fake_host;
  TCA_CHECK(parse_host_id(rank_, &fake_host));
  size_ = bootstrap_->size();
  set_log_rank(rank_);
  clock.lap("bootstrap");

  if (rank_ == 0) TCA_CHECK(random_job_key(&job_key_));
  TCA_CHECK(bootstrap_->broadcast(&job_key_, sizeof(job_key_), 0));

  TCA_CHECK(HostBlock::create(control_block_bytes(size_), memfd_name(rank_, 0).c_str(), &control_));
  PeerInfo mine;
  mine.pid = static_cast<int>(getpid());
  mine.control_fd = control_.fd();
  mine.control_inode = control_.inode();
  mine.machine_hash = machine_hash();
  mine.host_hash =
      fake_host.empty()
          ? mine.machine_hash
          : std::hash<std::string>{}(fmt::format("{:x}/{}", mine.machine_hash, fake_host));
  peers_.resize(size_);
  TCA_CHECK(bootstrap_->allgather(&mine, peers_.data(), sizeof(PeerInfo)));
  // From here a rank's death on this machine can be seen, so MPI calls can be guarded.
  TCA_CHECK(bootstrap_->start_guard([this](int peer) { return check_peer_alive(peer); }));
  // Launchers pin ranks to cores, so the host's online cores, not our affinity, are the supply.
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const long ranks_here = std::count_if(peers_.begin(), peers_.end(), [&](const PeerInfo& peer) {
    return peer.machine_hash == mine.machine_hash;
  });
  oversubscribed_ = cores > 0 && ranks_here > cores;
  clock.lap("control blocks");

  TCA_CHECK(HostBlock::create(2 * sizeof(uint64_t) * size_ * TCA_NOTIFY_SLOTS,
                              fmt::format("tca.{:016x}.{}.counters", job_key_, rank_).c_str(),
                              &notify_counters_));
  TCA_CHECK(init_domains());
  clock.lap("memory domains");
  TCA_CHECK(init_transports(forced, clock));
  const uint8_t has_gpu = domains_[TCA_MEM_GPU]->unavailable_reason().empty() ? 1 : 0;
  gpu_ranks_.resize(size_);
  TCA_CHECK(bootstrap_->allgather(&has_gpu, gpu_ranks_.data(), 1));
  TCA_CHECK(calibrate_choices());
  clock.lap("choice by size");
  TCA_CHECK(bootstrap_->barrier());
  clock.lap("barrier");
  TCA_INFO("initialized: rank {} of {}, job key {:#x}, transport {}; {}", rank_, size_, job_key_,
           forced, clock.summary());
  return TCA_SUCCESS;
}

// Memory domains see only what they need of the job (domain/memory_domain.h).
tcaResult Context::init_domains() {
  DomainSetup setup;
  setup.job_key = job_key_;
  setup.rank = rank_;
  for (int rank = 0; rank < rank_; ++rank)
    if (same_machine(rank)) ++setup.machine_rank;
  setup.internal = {&control_, &notify_counters_};
  TCA_CHECK(make_host_domain(setup, &domains_[TCA_MEM_CPU]));
  return make_gpu_domain(setup, &domains_[TCA_MEM_GPU]);
}

tcaResult Context::init_transports(const std::string& forced, InitClock& clock) {
  const auto& registry = transport_registry();
  if (registry.size() > static_cast<size_t>(kMaxTransports))
    TCA_FAIL(TCA_ERROR_INTERNAL, "{} transports registered, at most {}", registry.size(),
             kMaxTransports);
  for (size_t id = 0; id < registry.size(); ++id) {
    TCA_CHECK(registry[id].make(*this, static_cast<int>(id), &transports_));
    clock.lap(registry[id].name);
  }
  return choose_defaults(forced);
}

// Per peer and memory kinds, the first transport (of each id, its main path) that reaches it,
// the forced one, if any, before the others.
tcaResult Context::choose_defaults(const std::string& forced) {
  std::vector<Transport*> order;
  const int forced_id = forced == "auto" ? -1 : transport_id(forced.c_str());
  for (const auto& transport : transports_) {
    const bool first_of_id = std::none_of(
        order.begin(), order.end(), [&](const Transport* t) { return t->id() == transport->id(); });
    if (first_of_id) order.push_back(transport.get());
  }
  std::stable_partition(order.begin(), order.end(),
                        [&](const Transport* t) { return t->id() == forced_id; });
  order_ = order;
  forced_ = forced_id >= 0;
  default_.assign(size_, {});
  controller_.assign(size_, nullptr);
  for (int peer = 0; peer < size_; ++peer) {
    for (int local : {TCA_MEM_CPU, TCA_MEM_GPU})
      for (int remote : {TCA_MEM_CPU, TCA_MEM_GPU})
        for (Transport* transport : order)
          if (transport->can_reach(peer, static_cast<tcaMemKind>(local),
                                   static_cast<tcaMemKind>(remote))) {
            default_[peer][2 * local + remote] = transport;
            break;
          }
    for (Transport* transport : order)
      if (transport->controls(peer)) {
        controller_[peer] = transport;
        break;
      }
    if (controller_[peer] == nullptr)
      TCA_FAIL(TCA_ERROR_UNREACHABLE, "no transport of this build reaches rank {} from rank {}",
               peer, rank_);
  }
  return TCA_SUCCESS;
}

Transport* Context::find_transport(tcaPath path) const {
  for (const auto& transport : transports_)
    if (transport->path() == path) return transport.get();
  return nullptr;
}

Context::~Context() {
  // Peers may still read or write our memory until every rank has arrived here.
  if (bootstrap_ != nullptr) bootstrap_->barrier();
  descriptors_ = DescRegistry();  // prepared runs go before the transports that made them
  while (!transports_.empty()) transports_.pop_back();  // the last registered goes first
  if (bootstrap_ != nullptr) bootstrap_->stop_guard();  // before it goes (it may finalize MPI)
}

tcaResult Context::transport_for(tcaPath path, int peer, Transport** out) const {
  if (path == TCA_PATH_AUTO) {
    *out = controller_[peer];
    return TCA_SUCCESS;
  }
  for (const auto& transport : transports_) {
    if (transport->path() != path) continue;
    for (int local : {TCA_MEM_CPU, TCA_MEM_GPU})
      for (int remote : {TCA_MEM_CPU, TCA_MEM_GPU})
        if (transport->can_reach(peer, static_cast<tcaMemKind>(local),
                                 static_cast<tcaMemKind>(remote))) {
          *out = transport.get();
          return TCA_SUCCESS;
        }
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "path {} cannot reach rank {} from rank {}", transport->name(),
             peer, rank_);
  }
  TCA_FAIL(TCA_ERROR_UNREACHABLE, "path {} is not present in this build", static_cast<int>(path));
}

tcaResult Context::transport_for(tcaPath path, const Transfer& transfer, Transport** out) const {
  // The end this rank owns is local (a copy inside this rank: the source).
  const bool dst_local = transfer.dst->owner == rank_ && transfer.src->owner != rank_;
  const tcaMemKind local = dst_local ? transfer.dst->kind : transfer.src->kind;
  const tcaMemKind remote = dst_local ? transfer.src->kind : transfer.dst->kind;
  const auto kind_name = [](tcaMemKind kind) { return kind == TCA_MEM_GPU ? "GPU" : "host"; };
  if (path == TCA_PATH_AUTO) {
    *out = auto_transport(transfer.peer, local, remote, transfer.width * transfer.count);
    if (*out == nullptr)
      TCA_FAIL(TCA_ERROR_UNREACHABLE,
               "no transport of this build reaches rank {}'s {} memory "
               "from rank {}'s {} memory",
               transfer.peer, kind_name(remote), rank_, kind_name(local));
    return TCA_SUCCESS;
  }
  for (const auto& transport : transports_) {
    if (transport->path() != path) continue;
    if (!transport->can_reach(transfer.peer, local, remote))
      TCA_FAIL(TCA_ERROR_UNREACHABLE,
               "path {} cannot reach rank {}'s {} memory from rank {}'s "
               "{} memory",
               transport->name(), transfer.peer, kind_name(remote), rank_, kind_name(local));
    *out = transport.get();
    return TCA_SUCCESS;
  }
  TCA_FAIL(TCA_ERROR_UNREACHABLE, "path {} is not present in this build", static_cast<int>(path));
}

tcaMemKind Context::local_memory_kind(const void* ptr) const {
  return domains_[TCA_MEM_GPU]->contains(ptr) ? TCA_MEM_GPU : TCA_MEM_CPU;
}

// ---------------------------------------------------------------- DMA channels

void Context::track_run(int channel, PreparedRun* run) {
  auto& runs = in_flight_[channel];
  if (std::find(runs.begin(), runs.end(), run) == runs.end()) runs.push_back(run);
}

tcaResult Context::wait_channel(int channel) {
  auto& runs = in_flight_[channel];
  while (!runs.empty()) {
    const tcaResult waited = runs.front()->wait();
    if (waited == TCA_ERROR_TIMEOUT)  // name what this rank still has in flight
      return adopt_error(waited,
                         fmt::format("{} (draining channel {}; outstanding here: {})",
                                     last_error_message(), channel, observe::outstanding(*this)));
    // A run whose peer died has ended there: reported once, it leaves the channel, so that the
    // survivors' later drains of the channel wait only for their own runs.
    if (waited == TCA_ERROR_PEER_FAILED) runs.erase(runs.begin());
    TCA_CHECK(waited);
    runs.erase(runs.begin());
  }
  return TCA_SUCCESS;
}

void Context::forget_run(PreparedRun* run) {
  for (auto& runs : in_flight_) runs.erase(std::remove(runs.begin(), runs.end(), run), runs.end());
}

}  // namespace tca