// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/ucx/ucx_transport.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "base/error.h"
#include "base/handle.h"
#include "base/log.h"
#include "transport/job.h"
#include "transport/ucx/status.h"

namespace tca {

namespace {

uint64_t load_acquire(const unsigned char* block, uint64_t offset) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(block + offset), __ATOMIC_ACQUIRE);
}

// Where the environment does not say otherwise: fences that order operations per endpoint lane
// without waiting for them (UCX's "auto" may choose a strong fence, a flush that blocks until
// every operation of the worker completed, a round trip per fence, forever with a dead peer).
// Weak fences order what one lane carries, which covers TCP, shared memory and one RDMA rail;
// docs/UCX.md says when to set UCX_FENCE_MODE=ep_based instead.
// A region is registered as the range tcaCreateHandle was given: not grown to its whole CUDA
// allocation (UCX's default for cuda), whose detection fails for allocations UCX did not see
// made ("failed to insert region [0x0..0x0]" on 4 H200s) and which would register memory the
// caller never handed over. Every operation names its memory type, so UCX's cache of memory
// types is off: it took unregistered GPU buffers made before UCX started for host memory (a
// tcaPut from one crashed in UCX's copy on 2 H200s; with the cache off it is byte-exact). Of
// UCX's transports all but cuda_ipc: tca's CUDA transport joins the GPUs of a host, and CUDA
// maps another process's allocation once per process, so UCX's mapping of a peer's buffer (its
// key unpacked) made the CUDA transport's own fail ("resource already mapped" on 4 H200s).
ucx::UcpContext::Defaults ucx_defaults() {
  return {{"FENCE_MODE", "weak"},
          {"MEMTYPE_REG_WHOLE_ALLOC_TYPES", ""},
          {"MEMTYPE_CACHE", "n"},
          {"TLS", "^cuda_ipc"}};
}

// How long a run's done count may wait for the next run's begun before it is put on its own.
constexpr uint64_t kDoneDelayNs = 200'000;
// How long after a begun later runs may go without announcing themselves (and so how long an
// owner withdrawing a region may wait for a rank that keeps kicking).
constexpr uint64_t kLeaseNs = 1'000'000;

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Rounds of worker progress one call of progress() may take while each finds work.
constexpr int kProgressRoundsPerCall = 256;

// What each rank tells the others at init: whether its UCX started and reaches CUDA memory.
struct UcxStartup {
  uint8_t started = 0;
  uint8_t cuda = 0;
};

}  // namespace

UcxTransport::UcxTransport(Job& job, int id) : Transport(id), job_(job) {}

// ---------------------------------------------------------------- start-up and teardown

// This rank's own part, no collective: UCP context, worker, control block registered.
tcaResult UcxTransport::start_ucx(std::vector<uint8_t>* cuda_capable) {
  TCA_CHECK(ucx::UcpContext::create(UCP_FEATURE_RMA, ucx_defaults(), &ucp_));
  uint64_t types = 0;
  TCA_CHECK(ucp_.memory_types(&types));
  cuda_capable->assign(1, (types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0 ? 1 : 0);
  TCA_CHECK(ucx::Worker::create(ucp_, &worker_));
  TCA_CHECK(ucx::MemoryRegion::map(ucp_, job_.control_block(), job_.control_block_size(),
                                   UCS_MEMORY_TYPE_HOST, &control_memory_));
  return TCA_SUCCESS;
}

// Collective: every rank's control-block address and packed key; a key is unpacked when the
// endpoint to its rank is made (reach()).
tcaResult UcxTransport::map_control_block() {
  std::vector<uint8_t> mine(sizeof(uint64_t));
  const uint64_t address = reinterpret_cast<uintptr_t>(job_.control_block());
  std::memcpy(mine.data(), &address, sizeof address);
  std::vector<uint8_t> key;
  TCA_CHECK(control_memory_.pack_rkey(&key));
  mine.insert(mine.end(), key.begin(), key.end());
  std::vector<std::vector<uint8_t>> all;
  TCA_CHECK(ucx::allgather_bytes(job_.bootstrap(), mine, &all));
  const int size = job_.size();
  control_blocks_.resize(size);
  control_keys_.resize(size);
  control_packed_.resize(size);
  for (int rank = 0; rank < size; ++rank) {
    const std::vector<uint8_t>& theirs = all[rank];
    if (theirs.size() <= sizeof(uint64_t))
      TCA_FAIL(TCA_ERROR_INTERNAL, "rank {} sent no key of its control block", rank);
    std::memcpy(&control_blocks_[rank], theirs.data(), sizeof(uint64_t));
    control_packed_[rank].assign(theirs.begin() + sizeof(uint64_t), theirs.end());
  }
  return TCA_SUCCESS;
}

// The endpoint to `rank` and the key of its control block, made on first use (caller holds the
// worker).
tcaResult UcxTransport::reach(int rank) {
  if (rank < 0 || rank >= job_.size())
    TCA_FAIL(TCA_ERROR_INTERNAL, "the ucx transport has no rank {}", rank);
  if (control_keys_[rank].get() != nullptr) return TCA_SUCCESS;
  TCA_CHECK(endpoints_.reach(rank));
  const std::vector<uint8_t>& packed = control_packed_[rank];
  TCA_CHECK(
      ucx::RemoteKey::unpack(endpoints_[rank], packed.data(), packed.size(), &control_keys_[rank]));
  return TCA_SUCCESS;
}

tcaResult UcxTransport::init() {
  const int size = job_.size();
  std::vector<uint8_t> cuda_capable;
  const tcaResult started = start_ucx(&cuda_capable);
  if (started != TCA_SUCCESS) unusable_ = last_error_message();
  clear_last_error();
  const UcxStartup mine{static_cast<uint8_t>(started == TCA_SUCCESS),
                        static_cast<uint8_t>(started == TCA_SUCCESS && cuda_capable[0] != 0)};
  std::vector<UcxStartup> all(size);
  TCA_CHECK(job_.bootstrap().allgather(&mine, all.data(), sizeof mine));
  for (int rank = 0; rank < size; ++rank) {
    if (all[rank].started) continue;
    // Every rank knows the same: no collective below runs anywhere.
    if (unusable_.empty()) unusable_ = fmt::format("UCX did not start on rank {}", rank);
    if (started == TCA_SUCCESS || job_.rank() == rank)
      TCA_INFO("ucx transport reaches no rank: {}", unusable_);
    return TCA_SUCCESS;
  }
  cuda_.resize(size);
  for (int rank = 0; rank < size; ++rank) cuda_[rank] = all[rank].cuda;
  TCA_CHECK(ucx::Endpoints::connect(worker_, job_.bootstrap(), &endpoints_));
  TCA_CHECK(map_control_block());
  announced_.assign(size, Announced{});
  ready_ = true;
  // Between this rank's calls the helper progresses the worker and sends due done counts.
  // (A failure there leaves the count for the owner thread's next progress(), which reports it.)
  progress_.start(worker_, [this] { (void)send_due_done(false); });
  return TCA_SUCCESS;
}

// Runs collectively inside tcaFinalize (every rank destroys its transports in the same order).
UcxTransport::~UcxTransport() {
  progress_.stop();
  if (ready_ && teardown() != TCA_SUCCESS)
    TCA_WARN("ucx transport: teardown: {}", last_error_message());
}

tcaResult UcxTransport::teardown() {
  ready_ = false;
  progress_.stop();  // this thread has the worker alone from here
  TCA_INFO("ucx transport: the helper thread progressed the worker in {} rounds",
           progress_.busy_rounds());
  // Keys go after the operations that use them and before the endpoints they were unpacked for.
  TCA_CHECK(send_due_done(true));
  ucx::Request flushed;
  TCA_CHECK(ucx::flush(worker_, &flushed));
  TCA_CHECK(ucx::wait(worker_, flushed, check_for({})));
  TCA_CHECK(ucx::barrier_with_progress(job_.bootstrap(), worker_));
  posted_.clear();
  imported_.clear();
  control_keys_.clear();
  own_.clear();
  return endpoints_.close(job_.bootstrap(), check_for({}));
}

// ---------------------------------------------------------------- reach

bool UcxTransport::can_reach(int peer, tcaMemKind local, tcaMemKind remote) const {
  return unreachable_reason(peer, local, remote).empty();
}

bool UcxTransport::controls(int peer) const { return ready_ && peer >= 0 && peer < job_.size(); }

std::string UcxTransport::unreachable_reason(int peer, tcaMemKind local, tcaMemKind remote) const {
  if (!ready_) return unusable_.empty() ? "the ucx transport is not running" : unusable_;
  if (peer < 0 || peer >= job_.size()) return fmt::format("no rank {}", peer);
  if (local == TCA_MEM_GPU && !cuda_[job_.rank()])
    return fmt::format("UCX on rank {} does not handle CUDA memory", job_.rank());
  if (remote == TCA_MEM_GPU && !cuda_[peer])
    return fmt::format("UCX on rank {} does not handle CUDA memory", peer);
  return "";
}

ucx::WaitCheck UcxTransport::check_for(std::vector<int> peers) const {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(job_.timeout_ms());
  const int timeout_ms = job_.timeout_ms();
  return [this, peers = std::move(peers), deadline, timeout_ms]() -> tcaResult {
    for (int peer : peers) {
      TCA_CHECK(job_.check_peer_alive(peer));
      const ucs_status_t status = endpoints_.peer_status(peer);
      if (status != UCS_OK)
        TCA_FAIL(TCA_ERROR_PEER_FAILED, "UCX reports the connection to rank {} failed: {}", peer,
                 ucs_status_string(status));
    }
    if (std::chrono::steady_clock::now() > deadline)
      TCA_FAIL(TCA_ERROR_TIMEOUT, "a UCX operation did not complete within {} ms", timeout_ms);
    return TCA_SUCCESS;
  };
}

// ---------------------------------------------------------------- regions

tcaResult UcxTransport::register_region(PeerRegion& own, WireHandle* wire) {
  const ucx::WorkerUse use(progress_);
  if (!ready_ || own.bytes == 0) return TCA_SUCCESS;
  if (own.kind == TCA_MEM_GPU && !cuda_[job_.rank()]) return TCA_SUCCESS;  // unreachable via UCX
  const tcaResult mapped = map_region(own, wire);
  if (mapped == TCA_SUCCESS) return TCA_SUCCESS;
  // UCX refusing a region (seen: CUDA memory whose allocation its registration cache could not
  // find) costs only the ucx path to it: the handle goes out without a UCX record, the other
  // transports reach it as before, and a run through ucx that needs it fails saying why.
  if (mapped != TCA_ERROR_TRANSPORT && mapped != TCA_ERROR_UNSUPPORTED) return mapped;
  std::string why = last_error_message();
  clear_last_error();
  own.state[id()] = nullptr;
  own_.erase(own.id);
  if (registration_failures_++ == 0)
    TCA_WARN(
        "ucx transport: rank {} could not register a region with UCX, so the ucx path cannot "
        "reach it (the other transports still do): {}",
        job_.rank(), why);
  else
    TCA_INFO("ucx transport: rank {} could not register region {} with UCX: {}", job_.rank(),
             own.id, why);
  unregistered_[own.id] = std::move(why);
  return TCA_SUCCESS;
}

tcaResult UcxTransport::map_region(PeerRegion& own, WireHandle* wire) {
  auto region = std::make_unique<UcxOwnRegion>();
  void* base =
      own.mapped != nullptr ? static_cast<void*>(own.mapped) : reinterpret_cast<void*>(own.address);
  const bool gpu = own.kind == TCA_MEM_GPU;
  TCA_CHECK(ucx::MemoryRegion::map(
      ucp_, base, own.bytes, gpu ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST, &region->memory));
  std::vector<uint8_t> key;
  TCA_CHECK(region->memory.pack_rkey(&key));
  TCA_CHECK(reach(job_.rank()));
  TCA_CHECK(
      ucx::RemoteKey::unpack(endpoints_[job_.rank()], key.data(), key.size(), &region->self_key));
  TCA_CHECK(append_handle_record(*wire, id(), key.data(), key.size()));
  own.state[id()] = region.get();
  own_[own.id] = std::move(region);
  return TCA_SUCCESS;
}

std::string UcxTransport::unregistered_reason(uint64_t id) const {
  const auto found = unregistered_.find(id);
  return found == unregistered_.end() ? std::string() : found->second;
}

tcaResult UcxTransport::deregister_region(PeerRegion& own) {
  const ucx::WorkerUse use(progress_);
  own.state[id()] = nullptr;
  unregistered_.erase(own.id);
  own_.erase(own.id);  // unmaps it: the core waited for the peers' transfers into it
  return TCA_SUCCESS;
}

tcaResult UcxTransport::attach(PeerRegion& remote) {
  const ucx::WorkerUse use(progress_);
  if (!ready_) return TCA_SUCCESS;
  const uint8_t* record = nullptr;
  size_t bytes = 0;
  find_handle_record(remote.wire, id(), &record, &bytes);
  if (bytes == 0) return TCA_SUCCESS;  // its owner's UCX could not register it: unreachable
  // The core imports only handles whose every byte its owner issued (the record's digest), so
  // this is the key the owner's ucp_rkey_pack wrote; UCX reads it from a copy of exactly the
  // record's length.
  const std::vector<uint8_t> key(record, record + bytes);
  auto imported = std::make_unique<UcxRemoteRegion>();
  TCA_CHECK(reach(remote.owner));
  TCA_CHECK(
      ucx::RemoteKey::unpack(endpoints_[remote.owner], key.data(), key.size(), &imported->key));
  remote.state[id()] = imported.get();
  imported_.push_back(std::move(imported));
  return TCA_SUCCESS;
}

// ---------------------------------------------------------------- control block

tcaResult UcxTransport::put_word(int owner, uint64_t offset, uint64_t value) {
  const ucx::WorkerUse use(progress_);
  return post_words(owner, offset, &value, 1);
}

tcaResult UcxTransport::post_words(int owner, uint64_t offset, const uint64_t* values,
                                   size_t count) {
  TCA_CHECK(reach(owner));
  while (!posted_.empty() && posted_.front().request.test() != UCS_INPROGRESS) posted_.pop_front();
  PostedWord& word = posted_.emplace_back();
  std::copy(values, values + count, word.values);
  const tcaResult result =
      ucx::put(endpoints_[owner], word.values, count * sizeof(uint64_t), UCS_MEMORY_TYPE_HOST,
               control_address(owner, offset), control_key(owner), &word.request);
  if (result != TCA_SUCCESS || word.request.test() != UCS_INPROGRESS) posted_.pop_back();
  return result == TCA_SUCCESS ? TCA_SUCCESS : append_frame(result, __FILE__, __LINE__);
}

tcaResult UcxTransport::get_words(int owner, uint64_t offset, uint64_t* words, size_t count) {
  const ucx::WorkerUse use(progress_);
  TCA_CHECK(reach(owner));
  ucx::Request request;
  TCA_CHECK(ucx::get(endpoints_[owner], words, count * sizeof *words, UCS_MEMORY_TYPE_HOST,
                     control_address(owner, offset), control_key(owner), &request));
  TCA_CHECK(ucx::wait(worker_, request, check_for({owner})));
  return TCA_SUCCESS;
}

tcaResult UcxTransport::announce(int owner, bool done) {
  const ucx::WorkerUse use(progress_);
  Announced& announced = announced_[owner];
  if (done) {
    announced.done_due = announced.begun;
    announced.due_since_ns = now_ns();
    return TCA_SUCCESS;
  }
  ++announced.begun;
  ++announced.epoch;
  announced.begun_ns = now_ns();
  static_assert(kInflightLanes > 0, "begun and done cells are adjacent");
  const uint64_t words[2] = {announced.begun, announced.done_due};
  TCA_CHECK(
      post_words(owner, inflight_cell_offset(job_.size(), job_.rank(), id(), false), words, 2));
  announced.done_sent = announced.done_due;
  return TCA_SUCCESS;
}

uint64_t UcxTransport::open_epoch(int owner) const {
  const Announced& announced = announced_[owner];
  const bool open = announced.begun > announced.done_sent;
  return open && now_ns() - announced.begun_ns < kLeaseNs ? announced.epoch : 0;
}

tcaResult UcxTransport::send_due_done(bool all) {
  const uint64_t now = now_ns();
  bool fenced = false;
  for (int owner = 0; owner < static_cast<int>(announced_.size()); ++owner) {
    Announced& announced = announced_[owner];
    if (announced.done_due == announced.done_sent) continue;
    if (!all && now - announced.due_since_ns < kDoneDelayNs) continue;
    if (!fenced) TCA_CHECK(worker_.fence());  // after the runs' operations (they fenced too)
    fenced = true;
    const tcaResult posted = post_words(
        owner, inflight_cell_offset(job_.size(), job_.rank(), id(), true), &announced.done_due, 1);
    // A dead owner waits for nothing any more: its count is dropped, not an error of every later
    // progress call (survivors go on with the live ranks).
    if (posted == TCA_ERROR_PEER_FAILED)
      clear_last_error();
    else
      TCA_CHECK(posted);
    announced.done_sent = announced.done_due;
  }
  return TCA_SUCCESS;
}

tcaResult UcxTransport::region_alive(const PeerRegion& region, bool* alive) {
  const ucx::WorkerUse use(progress_);
  if (region.owner == job_.rank()) {
    *alive = load_acquire(job_.control_block(), live_cell_offset(region.id)) == region.id;
    return TCA_SUCCESS;
  }
  if (!controls(region.owner))
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "the ucx transport cannot reach rank {}: {}", region.owner,
             unreachable_reason(region.owner, TCA_MEM_CPU, TCA_MEM_CPU));
  uint64_t value = 0;
  TCA_CHECK(get_words(region.owner, live_cell_offset(region.id), &value, 1));
  *alive = value == region.id;
  return TCA_SUCCESS;
}

tcaResult UcxTransport::read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                                    uint64_t* issued) {
  const ucx::WorkerUse use(progress_);
  if (owner == job_.rank()) {
    *issued = load_acquire(job_.control_block(), issued_id_offset(job_.size()));
    *found = tca::read_record(job_.control_block(), id, out);
    return TCA_SUCCESS;
  }
  if (!controls(owner))
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "the ucx transport cannot reach rank {}: {}", owner,
             unreachable_reason(owner, TCA_MEM_CPU, TCA_MEM_CPU));
  TCA_CHECK(job_.check_peer_alive(owner));
  // The id before and after the words, each get complete before the next is issued: the owner
  // writes the words only while the id is absent, so equal ids bracket a whole record.
  uint64_t before = 0, after = 0;
  uint64_t words[kRecordWords] = {};
  TCA_CHECK(get_words(owner, issued_id_offset(job_.size()), issued, 1));
  TCA_CHECK(get_words(owner, record_offset(id), &before, 1));
  *found = before == id;
  if (!*found) return TCA_SUCCESS;
  TCA_CHECK(get_words(owner, record_offset(id), words, kRecordWords));
  TCA_CHECK(get_words(owner, record_offset(id), &after, 1));
  *found = after == id && words[0] == id;
  if (*found) *out = decode_record(words);
  return TCA_SUCCESS;
}

// ---------------------------------------------------------------- notifications, ordering

tcaResult UcxTransport::notify(int peer, int slot, uint64_t value) {
  const ucx::WorkerUse use(progress_);
  if (peer == job_.rank()) {  // only this rank writes its own cells for itself
    __atomic_store_n(
        reinterpret_cast<uint64_t*>(job_.control_block() + notify_cell_offset(peer, slot)), value,
        __ATOMIC_RELEASE);
    return TCA_SUCCESS;
  }
  if (!controls(peer))
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "the ucx transport cannot reach rank {}: {}", peer,
             unreachable_reason(peer, TCA_MEM_CPU, TCA_MEM_CPU));
  TCA_CHECK(fence());  // after every earlier operation to `peer`
  return put_word(peer, notify_cell_offset(job_.rank(), slot), value);
}

tcaResult UcxTransport::pio_pointer(PeerRegion& region, uint64_t, void**) {
  TCA_FAIL(TCA_ERROR_UNSUPPORTED,
           "region {} of rank {}: the ucx transport maps no peer memory; "
           "use tcaPut or a descriptor instead of PIO",
           region.id, region.owner);
}

tcaResult UcxTransport::fence() {
  const ucx::WorkerUse use(progress_);
  if (ready_) TCA_CHECK(worker_.fence());
  return TCA_SUCCESS;
}

tcaResult UcxTransport::progress() {
  const ucx::WorkerUse use(progress_);
  // Everything that has arrived: over TCP a large put lands fragment by fragment, each only
  // inside this rank's progress, and waits call this only now and then.
  if (!ready_) return TCA_SUCCESS;
  for (int round = 0; round < kProgressRoundsPerCall; ++round)
    if (worker_.progress() == 0) break;
  return send_due_done(false);
}

// ---------------------------------------------------------------- factory

tcaResult make_ucx_transport(Job& job, int id, std::vector<std::unique_ptr<Transport>>* out) {
  auto transport = std::make_unique<UcxTransport>(job, id);
  TCA_CHECK(transport->init());
  out->push_back(std::move(transport));
  return TCA_SUCCESS;
}

}  // namespace tca
