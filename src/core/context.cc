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
#include "core/wake.h"
#include "transport/registry.h"

namespace tca {
namespace {

std::atomic<uint64_t>* cell_at(unsigned char* block, uint64_t offset) {
  return reinterpret_cast<std::atomic<uint64_t>*>(block + offset);
}

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

// Tells the core this is a spin: it yields issue slots to an SMT sibling (which may be the very
// rank whose copy we wait for) and saves power.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// A wait spins this many misses before it yields the core; with more ranks than cores, fewer.
constexpr uint64_t kSpins = 1024;
constexpr uint64_t kSpinsOversubscribed = 4;
// With more ranks than cores a wait yields for this long before it sleeps on the futex: a yield
// hands the core to a runnable rank at once, while a sleep and its wake-up cost tens of
// microseconds (on 4 ranks over 2 cores, sleeping at once made an 8-byte allreduce 6x slower).
constexpr auto kYieldingTime = std::chrono::milliseconds(1);
// A poll that finds nothing advances every transport at this many misses, else only the one
// that controls the awaited peer.
constexpr uint32_t kPollMissesPerFullProgress = 16;
// Sleeps of an oversubscribed wait: the first short (a notification without a wake still
// lands soon), then longer.
constexpr uint32_t kFirstSleepUs = 50;
constexpr uint32_t kMaxSleepUs = 2000;

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
  TCA_CHECK(make_host_domain(*this, &domains_[TCA_MEM_CPU]));
  TCA_CHECK(make_gpu_domain(*this, &domains_[TCA_MEM_GPU]));
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

bool Context::carries_default_traffic(const Transport* transport) const {
  if (controller_.empty()) return true;  // not chosen yet: any transport may be
  for (int peer = 0; peer < size_; ++peer) {
    if (controller_[peer] == transport) return true;
    for (const Transport* chosen : default_[peer])
      if (chosen == transport) return true;
  }
  return false;
}

Context::~Context() {
  // Peers may still read or write our memory until every rank has arrived here.
  if (bootstrap_ != nullptr) bootstrap_->barrier();
  descriptors_ = DescRegistry();  // prepared runs go before the transports that made them
  while (!transports_.empty()) transports_.pop_back();  // the last registered goes first
  if (bootstrap_ != nullptr) bootstrap_->stop_guard();  // before it goes (it may finalize MPI)
}

std::string Context::memfd_name(int owner, uint32_t serial) const {
  return fmt::format("tca.{:016x}.{}.{}", job_key_, owner, serial);
}

uint64_t Context::next_notify_value(int peer, int slot) {
  return cell_at(reinterpret_cast<unsigned char*>(notify_sent_counter(peer, slot)), 0)
             ->fetch_add(1, std::memory_order_relaxed) +
         1;
}

uint64_t* Context::notify_sent_counter(int peer, int slot) {
  return reinterpret_cast<uint64_t*>(notify_counters_.data()) +
         static_cast<size_t>(peer) * TCA_NOTIFY_SLOTS + slot;
}

uint64_t* Context::notify_consumed_counter(int src, int slot) {
  return notify_sent_counter(size_ + src, slot);  // the consumed half follows the sent half
}

tcaResult Context::check_peer_alive(int peer) const {
  if (peer == rank_ || !same_machine(peer)) return TCA_SUCCESS;
  if (kill(peers_[peer].pid, 0) != 0 && errno == ESRCH)
    TCA_FAIL(TCA_ERROR_PEER_FAILED, "rank {} (pid {}) has exited", peer, peers_[peer].pid);
  return TCA_SUCCESS;
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

// ---------------------------------------------------------------- memory and regions

tcaResult Context::malloc_memory(void** ptr, size_t bytes, tcaMemKind kind) {
  if (ptr == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "ptr is NULL");
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "tcaMalloc of 0 bytes");
  if (kind != TCA_MEM_CPU && kind != TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown memory kind {}", static_cast<int>(kind));
  TCA_CHECK(domains_[kind]->allocate(bytes, ptr));
  // E.g. host blocks are pinned and mapped for the GPU engines, as cudaHostAlloc memory is.
  for (const auto& other : domains_)
    if (other->kind() != kind) other->allocated_elsewhere(*ptr, bytes);
  return TCA_SUCCESS;
}

tcaResult Context::free_memory(void* ptr) {
  if (ptr == nullptr) return TCA_SUCCESS;  // like free(NULL)
  MemoryDomain* owner = nullptr;
  size_t bytes = 0;
  for (const auto& domain : domains_)
    if (owner == nullptr && domain->find_allocation(ptr, &bytes)) owner = domain.get();
  if (owner == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} was not returned by tcaMalloc (or is freed)", ptr);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t end = begin + bytes;
  tcaResult drained = TCA_SUCCESS;
  for (auto it = own_regions_.begin(); it != own_regions_.end();) {
    PeerRegion& region = *it->second;
    if (region.kind == owner->kind() && region.address >= begin && region.address < end) {
      const tcaResult result = unpublish(region);
      if (drained == TCA_SUCCESS) drained = result;
      it = own_regions_.erase(it);
    } else {
      ++it;
    }
  }
  // A peer that outlived the timeout mid-transfer writes, if at all, into memory this process
  // no longer maps (a memfd's pages stay with that peer's mapping): the block goes anyway.
  for (const auto& other : domains_)
    if (other.get() != owner) other->releasing_elsewhere(ptr);
  TCA_CHECK(owner->release(ptr));
  return drained == TCA_SUCCESS ? TCA_SUCCESS : append_frame(drained, __FILE__, __LINE__);
}

tcaResult Context::create_handle(void* ptr, size_t bytes, tcaMemKind kind, tcaHandle* out) {
  if (out == nullptr || ptr == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "handle or ptr is NULL");
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "region of 0 bytes");
  if (kind != TCA_MEM_CPU && kind != TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown memory kind {}", static_cast<int>(kind));
  if (const std::string why = domains_[kind]->unavailable_reason(); !why.empty())
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "{}", why);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  if (bytes > UINTPTR_MAX - begin)
    TCA_FAIL(TCA_ERROR_SIZE_OVERFLOW, "region {} + {} bytes wraps the address space", ptr, bytes);

  auto region = std::make_unique<PeerRegion>();
  WireHandle& wire = region->wire;
  wire.memfd = -1;
  TCA_CHECK(domains_[kind]->export_range(ptr, bytes, region.get()));

  // Region ids are chosen so that each owns a free record slot of the control block.
  uint64_t id = 0;
  for (int tries = 0; tries < kMaxLiveRegions && id == 0; ++tries) {
    const uint64_t candidate = next_region_id_++;
    if (cell_at(control_block(), live_cell_offset(candidate))->load(std::memory_order_relaxed) == 0)
      id = candidate;
  }
  if (id == 0)
    TCA_FAIL(TCA_ERROR_OUT_OF_RESOURCES, "{} regions are registered already", kMaxLiveRegions);

  region->owner = rank_;
  region->owner_pid = peers_[rank_].pid;
  region->id = id;
  region->bytes = bytes;
  region->kind = kind;
  region->address = begin;
  // The host cannot store into device memory: GPU regions are reached by the GPU engines.
  region->mapped = kind == TCA_MEM_CPU ? static_cast<unsigned char*>(ptr) : nullptr;
  wire.kind = static_cast<uint8_t>(kind);
  wire.owner = rank_;
  wire.owner_pid = region->owner_pid;
  wire.job_key = job_key_;
  wire.region_id = id;
  wire.bytes = bytes;
  wire.address = begin;
  TCA_CHECK(register_with_transports(*region));  // each may append its record to the handle
  seal_handle(wire);

  cell_at(control_block(), issued_id_offset(size_))
      ->store(next_region_id_ - 1, std::memory_order_relaxed);
  publish_record(control_block(), record_of(*region));
  PeerRegion* published = region.get();
  known_regions_[{rank_, id}] = std::move(region);
  own_regions_[id] = published;
  *out = to_public(published->wire);
  return TCA_SUCCESS;
}

RegionRecord Context::record_of(const PeerRegion& region) const {
  RegionRecord record;
  record.id = region.id;
  record.bytes = region.bytes;
  record.address = region.address;
  record.kind = region.wire.kind;
  record.mappable = region.wire.mappable;
  record.memfd = region.wire.memfd;
  record.memfd_serial = region.wire.memfd_serial;
  record.memfd_offset = region.wire.memfd_offset;
  record.memfd_inode = region.memfd_inode;
  record.device_offset = region.wire.device_offset;
  std::memcpy(record.device_ipc, region.wire.device_ipc, sizeof(record.device_ipc));
  handle_digest(region.wire, record.handle_digest);
  return record;
}

tcaResult Context::register_with_transports(PeerRegion& region) {
  for (size_t i = 0; i < transports_.size(); ++i) {
    const tcaResult result = transports_[i]->register_region(region, &region.wire);
    if (result != TCA_SUCCESS) {
      while (i-- > 0) transports_[i]->deregister_region(region);
      return append_frame(result, __FILE__, __LINE__);
    }
  }
  return TCA_SUCCESS;
}

tcaResult Context::unpublish(PeerRegion& region) {
  // Withdraw the record first: a peer that announces a transfer after this sees the region
  // gone and writes nothing; one that announced it before is waited for.
  cell_at(control_block(), live_cell_offset(region.id))->store(0, std::memory_order_seq_cst);
  const tcaResult drained = await_transfers_in_flight(region);
  for (auto& transport : transports_) transport->deregister_region(region);
  region.mapped = nullptr;  // the memory may go away now; liveness checks stop every use
  return drained;
}

tcaResult Context::await_transfers_in_flight(const PeerRegion& region) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  struct Pending {
    int peer;
    int lane;
    uint64_t begun;
  };
  std::vector<Pending> pending;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    for (int lane = 0; lane < kInflightLanes; ++lane) {
      const uint64_t begun =
          cell_at(control_block(), inflight_cell_offset(size_, peer, lane, false))
              ->load(std::memory_order_acquire);
      if (inflight_done(peer, lane) < begun) pending.push_back({peer, lane, begun});
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  while (!pending.empty()) {
    // A transfer may need this rank inside MPI to complete (and to make its done cell visible).
    TCA_CHECK(progress_transports());
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [&](const Pending& p) {
                                   return inflight_done(p.peer, p.lane) >= p.begun ||
                                          check_peer_alive(p.peer) !=
                                              TCA_SUCCESS;  // its writes ended with it
                                 }),
                  pending.end());
    if (pending.empty()) break;
    if (Clock::now() > deadline)
      TCA_FAIL(TCA_ERROR_TIMEOUT,
               "region {} is withdrawn, but a transfer of rank {} into it was "
               "still in flight after {} ms",
               region.id, pending.front().peer, timeout_ms_);
    sched_yield();
  }
  clear_last_error();  // dead peers were an answer, not a failure
  return TCA_SUCCESS;
}

uint64_t Context::inflight_done(int peer, int lane) {
  return cell_at(control_block(), inflight_cell_offset(size_, peer, lane, true))
      ->load(std::memory_order_acquire);
}

tcaResult Context::destroy_handle(const tcaHandle* handle) {
  WireHandle wire;
  TCA_CHECK(decode_handle(handle, job_key_, size_, handle_record_ids(), &wire));
  if (wire.owner != rank_)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "region {} belongs to rank {}; only its owner ({}) may "
             "destroy it",
             wire.region_id, wire.owner, rank_);
  const auto found = own_regions_.find(wire.region_id);
  if (found == own_regions_.end())
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is already freed", wire.region_id,
             rank_);
  if (std::memcmp(&found->second->wire, &wire, sizeof(wire)) != 0)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle of region {} differs from its registration",
             wire.region_id);
  PeerRegion& region = *found->second;
  own_regions_.erase(found);
  return unpublish(region);
}

tcaResult Context::resolve(const tcaHandle* handle, PeerRegion** out) {
  WireHandle wire;
  TCA_CHECK(decode_handle(handle, job_key_, size_, handle_record_ids(), &wire));
  if (wire.owner == rank_) {
    const auto found = own_regions_.find(wire.region_id);
    if (found == own_regions_.end() && (wire.region_id == 0 || wire.region_id >= next_region_id_))
      TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "rank {} never registered a region {}", rank_,
               wire.region_id);
    if (found == own_regions_.end())
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", wire.region_id, rank_);
    if (std::memcmp(&found->second->wire, &wire, sizeof(wire)) != 0)
      TCA_FAIL(TCA_ERROR_INVALID_HANDLE, "handle of region {} differs from its registration",
               wire.region_id);
    *out = found->second;
    return TCA_SUCCESS;
  }
  const auto known = known_regions_.find({wire.owner, wire.region_id});
  if (known == known_regions_.end()) return import_region(wire, out);
  // Imported before, after the owner's record vouched for those bytes; other bytes are asked
  // about again, so that what was shown first never decides alone.
  if (std::memcmp(&known->second->wire, &wire, sizeof(wire)) != 0)
    return refuse_unlike_import(wire);
  bool alive = false;
  TCA_CHECK(region_alive(*known->second, &alive));
  if (!alive)
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", wire.region_id, wire.owner);
  *out = known->second.get();
  return TCA_SUCCESS;
}

// First use of a peer's region: its owner's record, not the handle, says what it is; the
// handle must agree with it in every field. Nothing is kept unless the import succeeds.
tcaResult Context::import_region(const WireHandle& wire, PeerRegion** out) {
  RegionRecord record;
  bool found = false;
  uint64_t issued = 0;
  TCA_CHECK(
      controller_[wire.owner]->read_record(wire.owner, wire.region_id, &record, &found, &issued));
  if (!found && (wire.region_id == 0 || wire.region_id > issued))
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE,
             "rank {} never registered a region {} (it issued ids up "
             "to {})",
             wire.owner, wire.region_id, issued);
  if (!found)
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", wire.region_id, wire.owner);
  TCA_CHECK(check_against_record(wire, record));
  auto region = std::make_unique<PeerRegion>();
  region->owner = wire.owner;
  region->owner_pid = peers_[wire.owner].pid;
  region->id = record.id;
  region->bytes = record.bytes;
  region->kind = static_cast<tcaMemKind>(record.kind);
  region->address = record.address;
  region->memfd_inode = record.memfd_inode;
  region->wire = wire;
  for (auto& transport : transports_)
    if (transport->can_reach(wire.owner, TCA_MEM_CPU, region->kind) ||
        transport->can_reach(wire.owner, TCA_MEM_GPU, region->kind))
      TCA_CHECK(transport->attach(*region));
  PeerRegion* imported = region.get();
  known_regions_[{wire.owner, wire.region_id}] = std::move(region);
  *out = imported;
  return TCA_SUCCESS;
}

// A handle of an imported region whose bytes differ from the import's: checked against the
// owner's record as a first import would be. The import holds the only bytes with the owner's
// digest, so the record refuses it (or says the region is freed); were it accepted, the import
// and the record would disagree, which nothing but a fault here can do.
tcaResult Context::refuse_unlike_import(const WireHandle& wire) {
  RegionRecord record;
  bool found = false;
  uint64_t issued = 0;
  TCA_CHECK(
      controller_[wire.owner]->read_record(wire.owner, wire.region_id, &record, &found, &issued));
  if (!found)
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} is freed", wire.region_id, wire.owner);
  TCA_CHECK(check_against_record(wire, record));
  TCA_FAIL(TCA_ERROR_INTERNAL,
           "region {} of rank {} was imported from bytes its owner's record "
           "does not vouch for",
           wire.region_id, wire.owner);
}

tcaResult Context::check_against_record(const WireHandle& wire, const RegionRecord& record) const {
  const char* differs = nullptr;
  if (wire.bytes != record.bytes)
    differs = "size";
  else if (wire.address != record.address)
    differs = "base address";
  else if (wire.kind != record.kind)
    differs = "memory kind";
  else if (wire.mappable != record.mappable)
    differs = "mappable flag";
  else if (wire.memfd != record.memfd || wire.memfd_serial != record.memfd_serial ||
           wire.memfd_offset != record.memfd_offset)
    differs = "memfd";
  else if (wire.device_offset != record.device_offset ||
           std::memcmp(wire.device_ipc, record.device_ipc, sizeof(record.device_ipc)) != 0)
    differs = "device export";
  else if (wire.owner_pid != peers_[wire.owner].pid)
    differs = "owner process";
  if (differs == nullptr) {
    // The fields agree; the digest decides the rest (the transport records above all).
    HandleDigest digest;
    handle_digest(wire, digest);
    if (std::memcmp(digest, record.handle_digest, kHandleDigestBytes) != 0)
      differs = "digest of its bytes, transport records included,";
  }
  if (differs != nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_HANDLE,
             "handle of region {} of rank {} does not match its owner's "
             "record ({} differs): forged or corrupted",
             wire.region_id, wire.owner, differs);
  return TCA_SUCCESS;
}

tcaResult Context::region_alive(const PeerRegion& region, bool* alive) {
  if (region.owner == rank_) {
    *alive =
        cell_at(control_block(), live_cell_offset(region.id))->load(std::memory_order_acquire) ==
        region.id;
    return TCA_SUCCESS;
  }
  return controller_[region.owner]->region_alive(region, alive);
}

// ---------------------------------------------------------------- notifications

tcaResult Context::notify(int dst_rank, int slot) {
  TCA_CHECK(controller_[dst_rank]->fence());
  return controller_[dst_rank]->notify(dst_rank, slot, next_notify_value(dst_rank, slot));
}

bool Context::consume_arrival(int src_rank, int slot, int* from) {
  const auto consume_from = [&](int src) {
    const uint64_t value =
        cell_at(control_block(), notify_cell_offset(src, slot))->load(std::memory_order_acquire);
    uint64_t& consumed = *notify_consumed_counter(src, slot);
    if (value <= consumed) return false;
    ++consumed;
    if (from != nullptr) *from = src;
    return true;
  };
  if (src_rank != TCA_ANY_RANK) return consume_from(src_rank);
  // Start the scan after the last rank served so that no sender starves the others.
  for (int i = 1; i <= size_; ++i) {
    const int src = (any_source_cursor_ + i) % size_;
    if (consume_from(src)) {
      any_source_cursor_ = src;
      return true;
    }
  }
  return false;
}

tcaResult Context::progress_transports() {
  for (auto& transport : transports_) TCA_CHECK(transport->progress());
  return TCA_SUCCESS;
}

tcaResult Context::test_notification(int src_rank, int slot, int* arrived, int* from) {
  *arrived = consume_arrival(src_rank, slot, from) ? 1 : 0;
  if (*arrived) return TCA_SUCCESS;
  // Like MPI_Test, a poll that found nothing advances the transports: a sender's one-sided
  // operation may need this rank to enter MPI before its notification can land. The transport
  // that controls the awaited peer every time (none for a same-host peer on shm), every
  // transport at every 16th miss: entering MPI or UCX costs (with more ranks than cores
  // Open MPI gives the core away inside it), and other peers' operations only need it now and
  // then to go on.
  Transport* controller =
      src_rank != TCA_ANY_RANK && !controller_.empty() ? controller_[src_rank] : nullptr;
  if (controller != nullptr && ++poll_misses_ % kPollMissesPerFullProgress != 0)
    return controller->progress();
  return progress_transports();
}

tcaResult Context::wait_notification(int src_rank, int slot, int* from) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  WakeWord wake(control_block(), size_);
  uint32_t sleep_us = kFirstSleepUs;
  Clock::time_point sleep_from{};  // oversubscribed: yields until then, then sleeps
  bool sleeping = false;
  for (uint64_t spin = 0;; ++spin) {
    if (consume_arrival(src_rank, slot, from)) return TCA_SUCCESS;
    cpu_relax();
    // Progress costs calls into MPI or UCX (a UCX worker with TCP connections polls its sockets);
    // a same-host notification needs none, so it is paid rarely: the transport that controls
    // the awaited peer now and then, every transport a quarter as often.
    if (spin % 64 == 63) {
      // (While the transports are still being made, as in the CUDA calibration, none controls.)
      Transport* controller =
          src_rank != TCA_ANY_RANK && !controller_.empty() ? controller_[src_rank] : nullptr;
      if (controller != nullptr && spin % 256 != 255) {
        TCA_CHECK(controller->progress());
      } else {
        TCA_CHECK(progress_transports());
      }
    }
    // A notification usually lands within microseconds: spin, then yield the core. When ranks
    // outnumber cores the sender may be waiting for this very core: yield almost at once, and
    // after a while of that sleep until the sender wakes us (where it needs no progress from
    // this rank, as on shm), so that a long wait costs no core. Notifications that come without
    // a wake (GPUs) are seen when the sleep times out; the sleeps grow.
    if (spin < (oversubscribed_ ? kSpinsOversubscribed : kSpins)) continue;
    if (oversubscribed_ && !sleeping) {
      if (spin == kSpinsOversubscribed) {
        sleep_from = Clock::now() + kYieldingTime;
      } else if (spin % 16 == 0) {
        sleeping = Clock::now() >= sleep_from && sleeps_waiting_for(src_rank);
      }
    }
    if (sleeping) {
      const uint32_t seen = wake.prepare();
      const bool arrived = consume_arrival(src_rank, slot, from);
      if (!arrived) wake.sleep(seen, sleep_us);
      wake.finish();
      if (arrived) return TCA_SUCCESS;
      sleep_us = std::min(2 * sleep_us, kMaxSleepUs);
      TCA_CHECK(progress_transports());
    } else {
      sched_yield();
      if (spin % 256 != 0) continue;
    }
    if (src_rank != TCA_ANY_RANK) {
      TCA_CHECK(check_peer_alive(src_rank));
    } else {
      for (int peer = 0; peer < size_; ++peer) TCA_CHECK(check_peer_alive(peer));
    }
    if (Clock::now() > deadline)
      TCA_FAIL(
          TCA_ERROR_TIMEOUT, "no notification on slot {} from {} within {} ms", slot,
          src_rank == TCA_ANY_RANK ? std::string("any rank") : fmt::format("rank {}", src_rank),
          timeout_ms_);
  }
}

bool Context::sleeps_waiting_for(int src_rank) const {
  if (!oversubscribed_) return false;
  // An MPI peer's one-sided operations may need this rank inside MPI to complete.
  const auto on_shm = [&](int peer) {
    return !controller_.empty() && controller_[peer]->path() == TCA_PATH_SHM;
  };
  if (src_rank != TCA_ANY_RANK) return on_shm(src_rank);
  for (int peer = 0; peer < size_; ++peer)
    if (!on_shm(peer)) return false;
  return true;
}

tcaResult Context::fence() {
  for (auto& transport : transports_) TCA_CHECK(transport->fence());
  return TCA_SUCCESS;
}

// ---------------------------------------------------------------- DMA channels

void Context::track_run(int channel, PreparedRun* run) {
  auto& runs = in_flight_[channel];
  if (std::find(runs.begin(), runs.end(), run) == runs.end()) runs.push_back(run);
}

tcaResult Context::wait_channel(int channel) {
  auto& runs = in_flight_[channel];
  while (!runs.empty()) {
    TCA_CHECK(runs.front()->wait());
    runs.erase(runs.begin());
  }
  return TCA_SUCCESS;
}

void Context::forget_run(PreparedRun* run) {
  for (auto& runs : in_flight_) runs.erase(std::remove(runs.begin(), runs.end(), run), runs.end());
}

}  // namespace tca
