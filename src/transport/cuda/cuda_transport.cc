#include <cudaTypedefs.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "core/context.h"
#include "core/error.h"
#include "core/settings.h"
#include "core/log.h"
#include "tca/tca_cuda.h"
#include "transport/cuda/cuda_transport_impl.h"

namespace tca {
namespace {

// 2D transfers with rows narrower than this go to the SMs on TCA_PATH_CUDA: the copy engines
// pay per row, the SMs gather narrow rows into full-width stores.
constexpr uint64_t kNarrowRowBytes = 512;
// The crossover used when a pair could not be measured.
constexpr uint64_t kDefaultCrossover = uint64_t{64} << 10;
// The notification slot of the calibration's ping-pongs: each arrives and is consumed before
// tcaInit returns, so the slot's sequences start every later use in step.
constexpr int kCalibrationSlot = TCA_NOTIFY_SLOTS - 1;
// How long the resident kernel stays without a kick (TCA_CUDA_RESIDENT_IDLE_US), and the most
// it may: while it runs, cudaDeviceSynchronize and cudaFree wait for it.

std::atomic<uint64_t>* cell_at(unsigned char* block, uint64_t offset) {
  return reinterpret_cast<std::atomic<uint64_t>*>(block + offset);
}

std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}"
      "{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
      b[15]);
}

tcaResult device_uuid(int device, std::string* out) {
  cudaDeviceProp properties = {};
  TCA_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  *out = format_uuid(properties.uuid);
  return TCA_SUCCESS;
}

// The allocation holding a device pointer (the driver knows; the runtime has no such query).
tcaResult allocation_range(const void* ptr, uintptr_t* base, size_t* bytes) {
  static PFN_cuMemGetAddressRange_v3020 get_range = nullptr;
  if (get_range == nullptr) {
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    TCA_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange",
                                                    reinterpret_cast<void**>(&get_range), 3020,
                                                    cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || get_range == nullptr)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "the CUDA driver has no cuMemGetAddressRange");
  }
  CUdeviceptr begin = 0;
  const CUresult result = get_range(&begin, bytes, reinterpret_cast<CUdeviceptr>(ptr));
  if (result != CUDA_SUCCESS)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} is not inside a device allocation (driver error {})",
             ptr, static_cast<int>(result));
  *base = static_cast<uintptr_t>(begin);
  return TCA_SUCCESS;
}

bool refresh_requested() {
  std::string value;
  return setting_choice("TCA_CUDA_CALIBRATE", &value) == TCA_SUCCESS && value == "1";
}

// One of TCA_PATH_CUDA_CE / _SM / _RESIDENT: the CUDA transport with its engine fixed. The
// regions are the main transport's, so registration is left to it.
class CudaPathView final : public Transport {
 public:
  CudaPathView(CudaTransportImpl& cuda, Engine engine, const char* name, tcaPath path)
      : Transport(cuda.id()), cuda_(cuda), engine_(engine), name_(name), path_(path) {}
  const char* name() const override { return name_; }
  tcaPath path() const override { return path_; }
  bool can_reach(int peer, tcaMemKind local, tcaMemKind remote) const override {
    return cuda_.can_reach(peer, local, remote);
  }
  bool controls(int) const override { return false; }  // the main transport does
  tcaResult register_region(PeerRegion&, WireHandle*) override { return TCA_SUCCESS; }
  tcaResult deregister_region(PeerRegion&) override { return TCA_SUCCESS; }
  tcaResult attach(PeerRegion&) override { return TCA_SUCCESS; }
  tcaResult region_alive(const PeerRegion& region, bool* alive) override {
    return cuda_.region_alive(region, alive);
  }
  tcaResult read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                        uint64_t* issued) override {
    return cuda_.read_record(owner, id, out, found, issued);
  }
  tcaResult prepare(const std::vector<Transfer>& run, std::unique_ptr<PreparedRun>* out) override {
    return cuda_.prepare_with(engine_, run, out);
  }
  tcaResult notify(int peer, int slot, uint64_t value) override {
    return cuda_.notify(peer, slot, value);
  }
  tcaResult pio_pointer(PeerRegion& region, uint64_t offset, void** out) override {
    return cuda_.pio_pointer(region, offset, out);
  }
  tcaResult fence() override { return cuda_.fence(); }
  tcaResult progress() override { return TCA_SUCCESS; }  // the transport itself progresses

 private:
  CudaTransportImpl& cuda_;
  Engine engine_;
  const char* name_;
  tcaPath path_;
};

}  // namespace

// What every rank publishes at start-up.
struct CudaTransportImpl::GpuCard {
  int32_t has_device;
  char uuid[48];
  cudaIpcMemHandle_t signals;
};

// ------------------------------------------------------------------ runs

CudaRun::CudaRun(CudaTransportImpl& transport, std::unique_ptr<GpuChain> chain,
                 std::vector<LivenessCheck> checks, std::vector<HostRegistration> pinned,
                 std::vector<NotifyKey> notifies)
    : transport_(transport),
      chain_(std::move(chain)),
      checks_(std::move(checks)),
      pinned_(std::move(pinned)),
      notifies_(std::move(notifies)) {
  const int me = transport_.context().rank();
  for (const LivenessCheck& check : checks_)
    if (check.owner != me && std::find(owners_.begin(), owners_.end(), check.owner) == owners_.end())
      owners_.push_back(check.owner);
}

tcaResult CudaRun::check_alive() const {
  for (const LivenessCheck& check : checks_)
    if (check.cell->load(std::memory_order_acquire) != check.id)
      TCA_FAIL(TCA_ERROR_FREED_HANDLE, "region {} of rank {} was freed; nothing was written",
               check.id, check.owner);
  return TCA_SUCCESS;
}

CudaRun::~CudaRun() { transport_.stop_resident(); }  // the chain's memory is freed next

tcaResult CudaRun::start() {
  transport_.announce_kick(owners_);
  if (const tcaResult ready = ready_to_launch(); ready != TCA_SUCCESS) {
    // Nothing was kicked: once the kicks before it are done, so is this one (its error stands).
    const ErrorKeeper keep;
    transport_.publish_completed_kicks(true);
    return append_frame(ready, __FILE__, __LINE__);
  }
  if (chain_->host_counted()) {
    // The host counts, so the GPU only publishes: no read of the sequence over PCIe.
    values_.clear();
    for (const NotifyKey& key : notifies_)
      values_.push_back(transport_.context().next_notify_value(key.receiver, key.slot));
    TCA_CHECK(transport_.host_kick(*chain_, &values_));
  } else {
    TCA_CHECK(transport_.host_kick(*chain_, nullptr));
  }
  kicked_ = true;
  return TCA_SUCCESS;
}

tcaResult CudaRun::wait() {
  if (kicked_) TCA_CHECK(transport_.wait_host_kicks());
  return TCA_SUCCESS;
}

tcaResult CudaRun::ready_to_launch() const {
  TCA_CHECK(check_alive());
  TCA_CHECK(transport_.check_stream_waits());
  return transport_.use_device();
}

tcaResult CudaRun::enqueue(cudaStream_t stream) {
  TCA_CHECK(ready_to_launch());
  return chain_->enqueue(stream);
}

// ------------------------------------------------------------------ start-up

tcaResult CudaTransportImpl::init() {
  TCA_CHECK(read_path_overrides());  // before any collective: bad input changes nothing
  peers_.resize(context_.size());
  TCA_CHECK(choose_device());
  TCA_CHECK(exchange_with_peers());
  return calibrate();
}

tcaResult CudaTransportImpl::read_path_overrides() {
  std::string path;
  TCA_CHECK(setting_choice("TCA_CUDA_PATH", &path));
  if (path == "ce") path_override_ = PathOverride::kCopyEngine;
  if (path == "sm") path_override_ = PathOverride::kSm;
  int64_t bytes = 0;
  bool set = false;
  TCA_CHECK(setting_count("TCA_CUDA_CROSSOVER", &bytes, &set));
  if (set) crossover_override_ = static_cast<uint64_t>(bytes);
  int64_t idle_us = 0;
  TCA_CHECK(setting_count("TCA_CUDA_RESIDENT_IDLE_US", &idle_us));
  resident_idle_ns_ = static_cast<uint64_t>(idle_us) * 1000;
  return TCA_SUCCESS;
}

// A rank without a usable GPU still joins every collective; its GPU calls then fail with the
// reason recorded here.
tcaResult CudaTransportImpl::choose_device() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    cudaGetLastError();
    device_problem_ = error != cudaSuccess
                          ? fmt::format("no CUDA device is usable: {}", cudaGetErrorString(error))
                          : std::string("no CUDA device is visible");
    return TCA_SUCCESS;
  }
  int local_rank = 0;
  for (int rank = 0; rank < context_.rank(); ++rank)
    if (context_.same_host(rank)) ++local_rank;
  device_ = local_rank % count;
  if (set_up_device() != TCA_SUCCESS) {
    device_problem_ =
        fmt::format("setting up CUDA device {} failed: {}", device_, last_error_message());
    TCA_WARN("{}", device_problem_);
    clear_last_error();
    device_ = -1;
    signals_.reset();
    counters_pinned_.reset();
    dma_stream_.reset();
    stream_wait_timed_out_.reset();
  }
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::set_up_device() {
  TCA_CUDA_CHECK(cudaSetDevice(device_));
  TCA_CHECK(device_uuid(device_, &uuid_));
  int value = 0;
  TCA_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device_));
  limits_.multiprocessors = value;
  TCA_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxPitch, device_));
  limits_.max_pitch = static_cast<uint64_t>(value);
  limits_.write_value_ops = device_has_write_value_ops(device_);

  TCA_CHECK(make_device_memory(sizeof(uint64_t) * TCA_DEVICE_SIGNALS, &signals_));
  TCA_CUDA_CHECK(cudaMemset(signals_.get(), 0, sizeof(uint64_t) * TCA_DEVICE_SIGNALS));
  TCA_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));  // zero before a peer signals
  // A blocking stream: host kicks follow the work the application put on the legacy default
  // stream before them (a cudaMemcpy from pageable memory may return before its copy lands).
  TCA_CHECK(make_stream(cudaStreamDefault, &dma_stream_));
  const HostBlock& counters = context_.notify_counter_block();
  TCA_CHECK(pin(counters.data(), counters.bytes(), &counters_pinned_, &counters_device_));
  void* flag = nullptr;
  TCA_CUDA_CHECK(cudaHostAlloc(&flag, sizeof(unsigned int), cudaHostAllocMapped));
  stream_wait_timed_out_ = PinnedHostMemory(flag);
  *static_cast<unsigned int*>(flag) = 0;
  TCA_CUDA_CHECK(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&stream_wait_timed_out_device_), flag, 0));
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::exchange_with_peers() {
  GpuCard mine = {};
  if (device_ >= 0) {
    mine.has_device = 1;
    std::snprintf(mine.uuid, sizeof(mine.uuid), "%s", uuid_.c_str());
    TCA_CUDA_CHECK(cudaIpcGetMemHandle(&mine.signals, signals_.get()));
  }
  std::vector<GpuCard> cards(context_.size());
  TCA_CHECK(context_.bootstrap().allgather(&mine, cards.data(), sizeof(GpuCard)));
  if (device_ < 0) return TCA_SUCCESS;
  // Every rank of this host with a GPU is reached, also one that shares this rank's GPU: CUDA
  // IPC maps its allocations into this process on the same device (attach() refuses a mapping
  // that would alias another). Kernels of processes that share a GPU take turns (time slices),
  // so a GPU-side wait for such a peer costs a slice; host-kicked copies do not wait on the GPU.
  for (int peer = 0; peer < context_.size(); ++peer) {
    if (!cards[peer].has_device || !context_.same_host(peer)) continue;
    if (connect_peer(peer, cards[peer]) != TCA_SUCCESS) {
      TCA_WARN("rank {} is not reachable through CUDA: {}", peer, last_error_message());
      clear_last_error();
      peers_[peer] = PeerGpu{};
    }
  }
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::connect_peer(int peer, const GpuCard& card) {
  PeerGpu& state = peers_[peer];
  state.uuid = card.uuid;
  int count = 0;
  TCA_CUDA_CHECK(cudaGetDeviceCount(&count));
  int ordinal = -1;
  for (int device = 0; device < count && ordinal < 0; ++device) {
    std::string uuid;
    TCA_CHECK(device_uuid(device, &uuid));
    if (uuid == state.uuid) ordinal = device;
  }
  if (ordinal < 0)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "its GPU {} is not visible in this process", state.uuid);
  TCA_CUDA_CHECK(cudaSetDevice(device_));
  if (ordinal != device_) TCA_CHECK(enable_peer_access(ordinal));

  if (peer == context_.rank()) {
    state.control = context_.control_block();
    state.signals = static_cast<uint64_t*>(signals_.get());
  } else {
    const PeerInfo& info = context_.peer(peer);
    TCA_CHECK(PeerMapping::open(info.pid, info.control_fd, 0, context_.control_block_size(),
                                context_.memfd_name(peer, 0).c_str(), info.control_inode,
                                &state.control_mapping));
    state.control = state.control_mapping.data();
    void* signals = nullptr;
    TCA_CUDA_CHECK(cudaIpcOpenMemHandle(&signals, card.signals, cudaIpcMemLazyEnablePeerAccess));
    state.signals_mapping = IpcMapping(signals);
    state.signals = static_cast<uint64_t*>(signals);
  }
  TCA_CHECK(pin(state.control, context_.control_block_size(), &state.control_pinned,
                &state.control_device));
  state.reachable = true;
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::enable_peer_access(int ordinal) const {
  // Peer access belongs to the process's primary context, which outlives tcaFinalize: enable
  // it once, so that later init cycles do not provoke "already enabled" errors.
  static std::set<std::pair<int, int>> enabled;
  if (enabled.count({device_, ordinal}) != 0) return TCA_SUCCESS;
  int can_access = 0;
  TCA_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, device_, ordinal));
  if (!can_access)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "GPU {} cannot access GPU {} (no peer access)", device_,
             ordinal);
  const cudaError_t result = cudaDeviceEnablePeerAccess(ordinal, 0);
  if (result == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // enabled by the application before tcaInit
  } else {
    TCA_CUDA_CHECK(result);
  }
  enabled.insert({device_, ordinal});
  return TCA_SUCCESS;
}

// ------------------------------------------------------------------ calibration

// Collective. A pair of ranks is measured when either lacks its calibration (or a refresh is
// asked for); both ranks of the pair take part, since the measurement is a ping-pong.
tcaResult CudaTransportImpl::calibrate() {
  const int size = context_.size();
  const std::string path = calibration_path();
  CalibrationCache cache;
  if (!path.empty()) cache.load(path);
  const bool refresh = refresh_requested();
  const bool overridden = path_override_ != PathOverride::kNone || crossover_override_;
  // Row `rank` of each matrix: what that rank says of each peer.
  std::vector<uint8_t> mine(2 * size, 0);
  for (int peer = 0; peer < size; ++peer) {
    mine[peer] = peers_[peer].reachable ? 1 : 0;
    mine[size + peer] = peers_[peer].reachable && !overridden &&
                        (refresh || cache.find(uuid_, peers_[peer].uuid) == nullptr);
  }
  std::vector<uint8_t> all(static_cast<size_t>(size) * 2 * size);
  TCA_CHECK(context_.bootstrap().allgather(mine.data(), all.data(), mine.size()));
  const auto said = [&](int rank, int peer, int matrix) {
    return all[static_cast<size_t>(rank) * 2 * size + matrix * size + peer] != 0;
  };
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < size; ++a)
    for (int b = a; b < size; ++b)
      if (said(a, b, 0) && said(b, a, 0) && (said(a, b, 1) || said(b, a, 1)))
        pairs.emplace_back(a, b);
  if (!pairs.empty()) TCA_CHECK(measure_pairs(pairs, &cache, path));

  for (int peer = 0; peer < size; ++peer) {
    const PairCalibration* pair = cache.find(uuid_, peers_[peer].uuid);
    if (peers_[peer].reachable && pair != nullptr) peers_[peer].calibration = *pair;
  }
  return TCA_SUCCESS;
}

namespace {

// What the initiating rank of a calibrated pair tells every rank.
struct MeasuredPair {
  char uuids[2][48];  // the initiator's GPU, the responder's
  uint32_t count;
  uint64_t sizes[32];
  double ce_gbps[32];
  double sm_gbps[32];
};

}  // namespace

// Collective. Every rank with a GPU lends a landing buffer and a source; the pairs measure one
// after another, so that no two measurements share a link. Every rank learns every result and
// the lowest rank of each host writes the cache file.
tcaResult CudaTransportImpl::measure_pairs(const std::vector<std::pair<int, int>>& pairs,
                                           CalibrationCache* cache, const std::string& cache_path) {
  struct Landing {
    int32_t ready;
    uint64_t bytes;
    cudaIpcMemHandle_t handle;
  };
  DeviceMemory landing;
  DeviceMemory source;
  Landing mine = {};
  // As large as the device allows, down to 1 MiB.
  for (uint64_t bytes = kCalibrationBytes; device_ >= 0 && bytes >= (uint64_t{1} << 20);
       bytes /= 2) {
    if (make_device_memory(bytes, &landing) == TCA_SUCCESS &&
        make_device_memory(bytes, &source) == TCA_SUCCESS &&
        fill_random(source.get(), bytes) == TCA_SUCCESS &&
        cudaIpcGetMemHandle(&mine.handle, landing.get()) == cudaSuccess) {
      mine.ready = 1;
      mine.bytes = bytes;
      break;
    }
    landing.reset();
    source.reset();
    cudaGetLastError();
    clear_last_error();
  }
  if (device_ >= 0 && !mine.ready) TCA_WARN("no calibration buffers on GPU {}", device_);
  std::vector<Landing> landings(context_.size());
  TCA_CHECK(context_.bootstrap().allgather(&mine, landings.data(), sizeof(Landing)));

  const int me = context_.rank();
  std::vector<PairCalibration> measured;
  for (const auto& [a, b] : pairs) {
    const bool involved = me == a || me == b;
    const int peer = me == a ? b : a;
    IpcMapping mapping;
    void* target = landing.get();
    int32_t ready = involved && landings[a].ready && landings[b].ready;
    if (ready && peer != me) {
      if (cudaIpcOpenMemHandle(&target, landings[peer].handle, cudaIpcMemLazyEnablePeerAccess) ==
          cudaSuccess) {
        mapping = IpcMapping(target);
      } else {
        TCA_WARN("calibration: cannot map rank {}'s landing buffer", peer);
        cudaGetLastError();
        ready = 0;
      }
    }
    // Both sides must be ready before either starts (the responder would wait for nothing).
    std::vector<int32_t> flags(context_.size());
    TCA_CHECK(context_.bootstrap().allgather(&ready, flags.data(), sizeof(int32_t)));
    int32_t ok = 0;
    PairCalibration pair;
    if (involved && flags[a] && flags[b]) {
      PingPongSide side;
      side.dst = static_cast<unsigned char*>(target);
      side.src = static_cast<const unsigned char*>(source.get());
      side.largest = std::min(landings[a].bytes, landings[b].bytes);
      side.notify = {reinterpret_cast<uint64_t*>(device_address_of_counter(
                         context_.notify_sent_counter(peer, kCalibrationSlot))),
                     reinterpret_cast<uint64_t*>(peers_[peer].control_device +
                                                 notify_cell_offset(me, kCalibrationSlot))};
      side.next_value = [this, peer] { return context_.next_notify_value(peer, kCalibrationSlot); };
      side.wait_for_peer = [this, peer] {
        return context_.wait_notification(peer, kCalibrationSlot, nullptr);
      };
      side.initiator = me == a;
      side.alone = a == b;
      if (measure_pingpong(side, limits_, dma_stream_.get(), &pair) == TCA_SUCCESS) {
        ok = 1;
      } else {
        TCA_WARN("calibrating GPU {} with rank {} failed: {}", device_, peer, last_error_message());
        cudaGetLastError();
        clear_last_error();
      }
    }
    TCA_CHECK(context_.bootstrap().allgather(&ok, flags.data(), sizeof(int32_t)));
    if (!flags[a] || !flags[b]) continue;
    MeasuredPair result = {};
    if (me == a) {
      std::snprintf(result.uuids[0], sizeof(result.uuids[0]), "%s", uuid_.c_str());
      std::snprintf(result.uuids[1], sizeof(result.uuids[1]), "%s", peers_[b].uuid.c_str());
      result.count = static_cast<uint32_t>(std::min<size_t>(pair.sizes.size(), 32));
      for (uint32_t i = 0; i < result.count; ++i) {
        result.sizes[i] = pair.sizes[i];
        result.ce_gbps[i] = pair.ce_gbps[i];
        result.sm_gbps[i] = pair.sm_gbps[i];
      }
    }
    TCA_CHECK(context_.bootstrap().broadcast(&result, sizeof(result), a));
    // A ping-pong is the same seen from either end: one result serves both directions.
    for (int direction = 0; direction < (a == b ? 1 : 2); ++direction) {
      PairCalibration entry;
      entry.src_uuid = result.uuids[direction];
      entry.dst_uuid = result.uuids[1 - direction];
      entry.sizes.assign(result.sizes, result.sizes + result.count);
      entry.ce_gbps.assign(result.ce_gbps, result.ce_gbps + result.count);
      entry.sm_gbps.assign(result.sm_gbps, result.sm_gbps + result.count);
      TCA_INFO("calibrated {} -> {}: copy engines from {} bytes", entry.src_uuid, entry.dst_uuid,
               entry.crossover());
      cache->put(entry);
      measured.push_back(std::move(entry));
    }
  }

  int first_here = 0;
  while (!context_.same_host(first_here)) ++first_here;
  if (me == first_here && !cache_path.empty() && !measured.empty()) {
    // What another job wrote meanwhile is kept.
    CalibrationCache file;
    file.load(cache_path);
    for (const PairCalibration& pair : measured) file.put(pair);
    if (file.save(cache_path) != TCA_SUCCESS) {
      TCA_WARN("calibration not cached: {}", last_error_message());
      clear_last_error();
    }
  }
  // Nobody frees its buffers while another rank may still be writing them.
  return context_.bootstrap().barrier();
}

// ------------------------------------------------------------------ memory

tcaResult CudaTransportImpl::require_device() const {
  if (device_ < 0)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "rank {} has no GPU: {}", context_.rank(), device_problem_);
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::use_device() const {
  int current = -1;
  TCA_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device_) TCA_CUDA_CHECK(cudaSetDevice(device_));
  return TCA_SUCCESS;
}

namespace {

// Peers map tcaMalloc'd GPU memory through CUDA IPC. Copy-engine pushes into a mapping whose
// allocation is not a whole number of 2 MiB pages ran at 290-300 GB/s against 375-390 for whole
// pages (64 and 256 MiB ping-pongs between two H200s, docs/PERFORMANCE.md), so allocations of
// 2 MiB or more get whole pages; regions keep the size asked for.
constexpr size_t kLargePageBytes = size_t{2} << 20;
size_t allocation_bytes(size_t bytes) {
  if (bytes < kLargePageBytes || bytes > SIZE_MAX - kLargePageBytes) return bytes;
  return (bytes + kLargePageBytes - 1) / kLargePageBytes * kLargePageBytes;
}

}  // namespace

tcaResult CudaTransportImpl::allocate(size_t bytes, void** ptr) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  Allocation allocation;
  TCA_CHECK(make_device_memory(allocation_bytes(bytes), &allocation.memory));
  allocation.bytes = bytes;
  *ptr = allocation.memory.get();
  allocations_.emplace(reinterpret_cast<uintptr_t>(*ptr), std::move(allocation));
  return TCA_SUCCESS;
}

bool CudaTransportImpl::find_allocation(const void* ptr, size_t* bytes) const {
  const auto found = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
  if (found == allocations_.end()) return false;
  *bytes = found->second.bytes;
  return true;
}

tcaResult CudaTransportImpl::release(void* ptr) {
  const auto found = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
  if (found == allocations_.end())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} is not GPU memory from tcaMalloc", ptr);
  TCA_CHECK(use_device());
  stop_resident();
  allocations_.erase(found);
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::pin(void* ptr, size_t bytes, HostRegistration* out,
                                 unsigned char** device) const {
  TCA_CUDA_CHECK(cudaHostRegister(ptr, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
  *out = HostRegistration(ptr);
  void* mapped = nullptr;
  TCA_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, ptr, 0));
  *device = static_cast<unsigned char*>(mapped);
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::pin_host_block(void* ptr, size_t bytes) {
  if (device_ < 0) return TCA_SUCCESS;
  HostRegistration pinned;
  unsigned char* device = nullptr;
  if (use_device() != TCA_SUCCESS || pin(ptr, bytes, &pinned, &device) != TCA_SUCCESS) {
    // Not fatal: a chain that uses the block pins its region then.
    TCA_WARN("could not pin host block {} ({} bytes) for the GPU: {}", ptr, bytes,
             last_error_message());
    clear_last_error();
    return TCA_SUCCESS;
  }
  pinned_blocks_.emplace(reinterpret_cast<uintptr_t>(ptr), std::move(pinned));
  return TCA_SUCCESS;
}

void CudaTransportImpl::unpin_host_block(void* ptr) {
  pinned_blocks_.erase(reinterpret_cast<uintptr_t>(ptr));
}

tcaMemKind CudaTransportImpl::memory_kind(const void* ptr) const {
  if (device_ < 0 || ptr == nullptr) return TCA_MEM_CPU;
  cudaPointerAttributes attributes = {};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return TCA_MEM_CPU;
  }
  return attributes.type == cudaMemoryTypeDevice ? TCA_MEM_GPU : TCA_MEM_CPU;
}

tcaResult CudaTransportImpl::export_device_range(const void* ptr, size_t bytes, WireHandle* wire) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  cudaPointerAttributes attributes = {};
  TCA_CUDA_CHECK(cudaPointerGetAttributes(&attributes, ptr));
  if (attributes.type != cudaMemoryTypeDevice)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "{} is not device memory, but was registered as "
             "TCA_MEM_GPU",
             ptr);
  if (attributes.device != device_)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "{} is memory of GPU {}; this rank's GPU is {}", ptr,
             attributes.device, device_);
  uintptr_t base = 0;
  size_t allocation_bytes = 0;
  TCA_CHECK(allocation_range(ptr, &base, &allocation_bytes));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  if (bytes > base + allocation_bytes - begin)
    TCA_FAIL(TCA_ERROR_OUT_OF_BOUNDS,
             "region {} + {} bytes runs past its device allocation "
             "({} bytes at {:#x})",
             ptr, bytes, allocation_bytes, base);
  cudaIpcMemHandle_t handle;
  static_assert(sizeof(handle) <= sizeof(wire->device_ipc), "IPC handle must fit the handle");
  TCA_CUDA_CHECK(cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(base)));
  std::memcpy(wire->device_ipc, &handle, sizeof(handle));
  wire->device_offset = begin - base;
  return TCA_SUCCESS;
}

// ------------------------------------------------------------------ regions

tcaResult CudaTransportImpl::register_region(PeerRegion& own, WireHandle* /*wire*/) {
  // GPU regions are reached at their own address; host regions are pinned when first used.
  if (own.kind == TCA_MEM_GPU) own.state[id()] = reinterpret_cast<void*>(own.address);
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::deregister_region(PeerRegion& own) {
  own.state[id()] = nullptr;
  if (pinned_regions_.count(own.id) != 0) stop_resident();
  pinned_regions_.erase(own.id);
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::attach(PeerRegion& remote) {
  if (remote.kind != TCA_MEM_GPU || !reaches(remote.owner)) return TCA_SUCCESS;
  TCA_CHECK(use_device());
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, remote.wire.device_ipc, sizeof(handle));
  close_dead_imports(remote.owner);
  // One mapping per exported allocation: CUDA opens a handle once per process.
  const std::pair<int, std::string> key{remote.owner, std::string(handle.reserved, sizeof(handle))};
  IpcImport& import = ipc_imports_[key];
  if (!import.mapping) {
    void* base = nullptr;
    const cudaError_t opened = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
    if (opened != cudaSuccess) {
      ipc_imports_.erase(key);
      TCA_CUDA_CHECK(opened);
    }
    IpcMapping mapping(base);
    if (const std::string alias = aliased_mapping(key, base); !alias.empty()) {
      ipc_imports_.erase(key);  // `mapping` closes this open of it
      TCA_FAIL(TCA_ERROR_TRANSPORT,
               "CUDA mapped rank {}'s GPU allocation at {}, where {} is already mapped: "
               "writes would land in the wrong allocation",
               remote.owner, base, alias);
    }
    import.mapping = std::move(mapping);
  }
  import.region_ids.push_back(remote.id);
  remote.state[id()] =
      static_cast<unsigned char*>(import.mapping.get()) + remote.wire.device_offset;
  return TCA_SUCCESS;
}

std::string CudaTransportImpl::aliased_mapping(const std::pair<int, std::string>& key,
                                               const void* base) const {
  const auto address = reinterpret_cast<uintptr_t>(base);
  for (const auto& [other_key, other] : ipc_imports_)
    if (other_key != key && other.mapping.get() == base)
      return fmt::format("an allocation of rank {}", other_key.first);
  for (const auto& [begin, allocation] : allocations_)
    if (address >= begin && address < begin + allocation_bytes(allocation.bytes))
      return "this rank's own allocation";
  return "";
}

void CudaTransportImpl::close_dead_imports(int owner) {
  for (auto it = ipc_imports_.begin(); it != ipc_imports_.end();) {
    const std::vector<uint64_t>& ids = it->second.region_ids;
    const bool dead =
        it->first.first == owner && std::none_of(ids.begin(), ids.end(), [&](uint64_t id) {
          return live_cell(owner, id)->load(std::memory_order_acquire) == id;
        });
    if (dead) stop_resident();
    it = dead ? ipc_imports_.erase(it) : std::next(it);
  }
}

tcaResult CudaTransportImpl::read_record(int owner, uint64_t id, RegionRecord* out, bool* found,
                                         uint64_t* issued) {
  if (!peers_[owner].reachable)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "the cuda transport does not reach rank {}", owner);
  const unsigned char* control =
      owner == context_.rank() ? context_.control_block() : peers_[owner].control;
  *issued = cell_at(const_cast<unsigned char*>(control), issued_id_offset(context_.size()))
                ->load(std::memory_order_acquire);
  *found = tca::read_record(control, id, out);
  return TCA_SUCCESS;
}

const std::atomic<uint64_t>* CudaTransportImpl::live_cell(int owner, uint64_t region_id) const {
  unsigned char* control =
      owner == context_.rank() ? context_.control_block() : peers_[owner].control;
  return cell_at(control, live_cell_offset(region_id));
}

tcaResult CudaTransportImpl::region_alive(const PeerRegion& region, bool* alive) {
  if (region.owner != context_.rank() && peers_[region.owner].control == nullptr)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "rank {}'s control block is not mapped here", region.owner);
  *alive = live_cell(region)->load(std::memory_order_acquire) == region.id;
  return TCA_SUCCESS;
}

unsigned char* CudaTransportImpl::mapped_host_address(const void* ptr, size_t bytes) const {
  const auto device_of = [](const void* address) -> unsigned char* {
    cudaPointerAttributes attributes = {};
    if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    if (attributes.type != cudaMemoryTypeHost) return nullptr;
    return static_cast<unsigned char*>(attributes.devicePointer);
  };
  unsigned char* first = device_of(ptr);
  unsigned char* last = device_of(static_cast<const unsigned char*>(ptr) + bytes - 1);
  return first != nullptr && last == first + bytes - 1 ? first : nullptr;
}

tcaResult CudaTransportImpl::host_device_address(PeerRegion& region,
                                                 std::vector<HostRegistration>* temporary,
                                                 unsigned char** out) {
  if (region.owner == context_.rank()) {
    void* host = reinterpret_cast<void*>(region.address);
    *out = mapped_host_address(host, region.bytes);  // tcaMalloc blocks, or pinned by the user
    if (*out == nullptr) {
      HostRegistration pinned;
      TCA_CHECK(pin(host, region.bytes, &pinned, out));
      if (region.id == 0) {
        temporary->push_back(std::move(pinned));
        return TCA_SUCCESS;
      }
      pinned_regions_[region.id] = std::move(pinned);
    }
    if (region.id != 0) region.state[id()] = *out;
    return TCA_SUCCESS;
  }
  if (!region.wire.mappable)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED,
             "region {} of rank {} is user host memory that this process "
             "cannot map for its GPU; register tcaMalloc memory instead",
             region.id, region.owner);
  HostImport import;
  TCA_CHECK(PeerMapping::open(
      region.owner_pid, region.wire.memfd, region.wire.memfd_offset, region.bytes,
      context_.memfd_name(region.owner, region.wire.memfd_serial).c_str(), region.memfd_inode,
      &import.mapping));
  TCA_CHECK(pin(import.mapping.data(), region.bytes, &import.pinned, out));
  region.state[id()] = *out;
  host_imports_.push_back(std::move(import));
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::end_address(PeerRegion& end, std::vector<HostRegistration>* temporary,
                                         unsigned char** out) {
  if (end.state[id()] != nullptr) {
    *out = static_cast<unsigned char*>(end.state[id()]);
    return TCA_SUCCESS;
  }
  if (end.kind == TCA_MEM_CPU) return host_device_address(end, temporary, out);
  if (end.owner == context_.rank() && end.id == 0) {  // a tcaPut/tcaGet buffer in GPU memory
    *out = reinterpret_cast<unsigned char*>(end.address);
    return TCA_SUCCESS;
  }
  TCA_FAIL(TCA_ERROR_UNREACHABLE, "GPU region {} of rank {} is not mapped on rank {}", end.id,
           end.owner, context_.rank());
}

tcaResult CudaTransportImpl::device_address(PeerRegion& region, unsigned char** out) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  if (!reaches(region.owner))
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "rank {} cannot reach rank {}'s memory from its GPU",
             context_.rank(), region.owner);
  std::vector<HostRegistration> none;  // registered regions keep their pinning
  return end_address(region, &none, out);
}

unsigned char* CudaTransportImpl::device_address_of_counter(const uint64_t* counter) const {
  const auto* base = context_.notify_counter_block().data();
  return counters_device_ + (reinterpret_cast<const unsigned char*>(counter) - base);
}

// ------------------------------------------------------------------ chains

Engine CudaTransportImpl::choose_engine(int peer, uint64_t bytes, uint64_t row_bytes) const {
  if (path_override_ == PathOverride::kCopyEngine) return Engine::kCopyEngine;
  if (path_override_ == PathOverride::kSm) return Engine::kSm;
  if (row_bytes < kNarrowRowBytes) return Engine::kSm;
  const PairCalibration* pair = calibration(peer);
  if (pair != nullptr && !crossover_override_) return pair->pick(bytes);
  return bytes >= crossover(peer) ? Engine::kCopyEngine : Engine::kSm;
}

uint64_t CudaTransportImpl::crossover(int peer) const {
  if (path_override_ == PathOverride::kCopyEngine) return 0;
  if (path_override_ == PathOverride::kSm) return kNeverCopyEngine;
  if (crossover_override_) return *crossover_override_;
  const PairCalibration* pair = calibration(peer);
  return pair != nullptr ? pair->crossover() : kDefaultCrossover;
}

const PairCalibration* CudaTransportImpl::calibration(int peer) const {
  return peers_[peer].calibration ? &*peers_[peer].calibration : nullptr;
}

tcaResult CudaTransportImpl::prepare_with(std::optional<Engine> engine,
                                          const std::vector<Transfer>& run,
                                          std::unique_ptr<PreparedRun>* out) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  const int me = context_.rank();
  std::vector<DevicePiece> pieces;
  std::vector<LivenessCheck> checks;
  std::vector<HostRegistration> temporary;
  std::vector<NotifyKey> notify_keys;
  uint64_t total_bytes = 0;
  uint64_t narrowest_row = UINT64_MAX;
  for (const Transfer& transfer : run) {
    if (!reaches(transfer.peer))
      TCA_FAIL(TCA_ERROR_UNREACHABLE,
               "rank {} cannot reach rank {} through CUDA (another host, "
               "no GPU on one side, or no peer access)",
               me, transfer.peer);
    DevicePiece piece;
    unsigned char* dst = nullptr;
    unsigned char* src = nullptr;
    TCA_CHECK(end_address(*transfer.dst, &temporary, &dst));
    TCA_CHECK(end_address(*transfer.src, &temporary, &src));
    piece.dst = dst + transfer.dst_offset;
    piece.src = src + transfer.src_offset;
    piece.width = transfer.width;
    piece.count = transfer.count;
    piece.dst_pitch = transfer.dst_pitch;
    piece.src_pitch = transfer.src_pitch;
    if (transfer.flags & TCA_FLAG_NOTIFY) {
      const int receiver = transfer.dst->owner;
      piece.notifies.push_back(
          {reinterpret_cast<uint64_t*>(
               device_address_of_counter(context_.notify_sent_counter(receiver, transfer.slot))),
           reinterpret_cast<uint64_t*>(peers_[receiver].control_device +
                                       notify_cell_offset(me, transfer.slot))});
      notify_keys.push_back({receiver, transfer.slot});
    }
    for (const PeerRegion* end : {transfer.dst, transfer.src}) {
      const bool listed = std::any_of(checks.begin(), checks.end(), [&](const auto& check) {
        return check.id == end->id && check.owner == end->owner;
      });
      if (end->id != 0 && !listed) checks.push_back({live_cell(*end), end->id, end->owner});
    }
    total_bytes += transfer.width * transfer.count;
    if (transfer.count > 1) narrowest_row = std::min(narrowest_row, transfer.width);
    pieces.push_back(std::move(piece));
  }
  Engine chosen = engine ? *engine : choose_engine(run.front().peer, total_bytes, narrowest_row);
  if (!engine && chosen == Engine::kCopyEngine &&
      !std::all_of(pieces.begin(), pieces.end(),
                   [&](const DevicePiece& piece) { return copy_engine_can_carry(piece, limits_); }))
    chosen = Engine::kSm;
  std::unique_ptr<GpuChain> chain;
  TCA_CHECK(make_gpu_chain(chosen, pieces, limits_, &chain));
  TCA_TRACE("prepared a chain of {} transfers, {} bytes, on the {}", run.size(), total_bytes,
            engine_name(chosen));
  *out = std::make_unique<CudaRun>(*this, std::move(chain), std::move(checks), std::move(temporary),
                                   std::move(notify_keys));
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::dma_stream_idle(bool* idle) {
  *idle = true;
  if (!stream_kicks_pending_) return TCA_SUCCESS;
  const cudaError_t state = cudaStreamQuery(dma_stream());  // about a microsecond
  if (state == cudaErrorNotReady) {
    *idle = false;
    return TCA_SUCCESS;
  }
  TCA_CUDA_CHECK(state);
  stream_kicks_pending_ = false;
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::host_kick(GpuChain& chain, const std::vector<uint64_t>* values) {
  const SmCopyParams* phases = chain.resident_phases();
  if (phases != nullptr && values != nullptr &&
      ResidentServer::carries(values->data(), static_cast<uint32_t>(values->size()))) {
    bool idle = false;
    TCA_CHECK(dma_stream_idle(&idle));
    if (idle) {
      if (!resident_) TCA_CHECK(ResidentServer::make(resident_idle_ns_, &resident_));
      return resident_->kick(phases, values->data(), static_cast<uint32_t>(values->size()));
    }
  }
  if (resident_ && resident_->busy()) TCA_CHECK(resident_->wait_all());  // kicks keep their order
  stream_kicks_pending_ = true;
  return values != nullptr ? chain.kick(dma_stream(), values->data()) : chain.enqueue(dma_stream());
}

tcaResult CudaTransportImpl::wait_host_kicks() {
  if (resident_) TCA_CHECK(resident_->wait_all());
  if (stream_kicks_pending_) {
    TCA_CUDA_CHECK(cudaStreamSynchronize(dma_stream()));
    stream_kicks_pending_ = false;
  }
  return publish_completed_kicks(false);
}

void CudaTransportImpl::announce_kick(const std::vector<int>& owners) {
  if (owners.empty()) return;
  if (kick_sequences_.empty()) {
    kick_sequences_.assign(context_.size(), 0);
    kick_unpublished_.assign(context_.size(), false);
  }
  for (int owner : owners) {
    if (peers_[owner].control == nullptr) continue;
    cell_at(peers_[owner].control,
            inflight_cell_offset(context_.size(), context_.rank(), id(), false))
        ->store(++kick_sequences_[owner], std::memory_order_relaxed);
    kick_unpublished_[owner] = true;
  }
  kicks_unpublished_ = true;
  // Pairs with the owner's fence between withdrawing a record and reading the begun cells.
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

tcaResult CudaTransportImpl::publish_completed_kicks(bool wait) {
  if (!kicks_unpublished_) return TCA_SUCCESS;
  if (wait) return wait_host_kicks();  // which publishes
  if (resident_ && resident_->busy()) return TCA_SUCCESS;
  bool idle = false;
  TCA_CHECK(dma_stream_idle(&idle));
  if (!idle) return TCA_SUCCESS;
  for (int owner = 0; owner < context_.size(); ++owner) {
    if (!kick_unpublished_[owner]) continue;
    cell_at(peers_[owner].control,
            inflight_cell_offset(context_.size(), context_.rank(), id(), true))
        ->store(kick_sequences_[owner], std::memory_order_release);
    kick_unpublished_[owner] = false;
  }
  kicks_unpublished_ = false;
  return TCA_SUCCESS;
}

void CudaTransportImpl::stop_resident() {
  if (resident_ && resident_->stop() != TCA_SUCCESS) {
    TCA_WARN("ending the resident kernel failed: {}", last_error_message());
    clear_last_error();
  }
}

tcaResult CudaTransportImpl::notify(int peer, int slot, uint64_t value) {
  if (peers_[peer].control == nullptr)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "rank {}'s control block is not mapped here", peer);
  cell_at(peers_[peer].control, notify_cell_offset(context_.rank(), slot))
      ->store(value, std::memory_order_release);
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::pio_pointer(PeerRegion& region, uint64_t offset, void** out) {
  if (region.kind == TCA_MEM_GPU)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED,
             "region {} of rank {} is GPU memory: the host cannot store "
             "into it; use tcaDevicePointer in a kernel",
             region.id, region.owner);
  if (region.mapped == nullptr)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "region {} of rank {} is not mapped in this process", region.id,
             region.owner);
  *out = region.mapped + offset;
  return TCA_SUCCESS;
}

// ------------------------------------------------------------------ GPU API

tcaResult CudaTransportImpl::signal_address(int rank, int index, uint64_t** out) const {
  TCA_CHECK(require_device());
  if (index < 0 || index >= TCA_DEVICE_SIGNALS)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "signal index {} outside [0, {})", index,
             TCA_DEVICE_SIGNALS);
  if (peers_[rank].signals == nullptr)
    TCA_FAIL(TCA_ERROR_UNREACHABLE,
             "rank {}'s signal cells are not reachable from rank {}'s "
             "GPU",
             rank, context_.rank());
  *out = peers_[rank].signals + index;
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::enqueue_notification_wait(int src_rank, int slot,
                                                       cudaStream_t stream) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  TCA_CHECK(check_stream_waits());
  const auto* cell = reinterpret_cast<const uint64_t*>(peers_[context_.rank()].control_device +
                                                       notify_cell_offset(src_rank, slot));
  auto* consumed = reinterpret_cast<uint64_t*>(
      device_address_of_counter(context_.notify_consumed_counter(src_rank, slot)));
  const uint64_t timeout_ns = static_cast<uint64_t>(context_.timeout_ms()) * 1000000;
  TCA_CUDA_CHECK(
      launch_notification_wait(cell, consumed, timeout_ns, stream_wait_timed_out_device_, stream));
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::check_stream_waits() {
  if (!stream_wait_timed_out_) return TCA_SUCCESS;
  auto* flag = reinterpret_cast<std::atomic<unsigned int>*>(stream_wait_timed_out_.get());
  if (flag->exchange(0, std::memory_order_acq_rel) != 0)
    TCA_FAIL(TCA_ERROR_TIMEOUT,
             "a stream-ordered wait for a notification outlived {} ms and "
             "released its stream",
             context_.timeout_ms());
  return TCA_SUCCESS;
}

tcaResult make_cuda_transport(Context& context, int id,
                              std::vector<std::unique_ptr<Transport>>* transports) {
  auto transport = std::make_unique<CudaTransportImpl>(context, id);
  TCA_CHECK(transport->init());
  CudaTransportImpl& impl = *transport;
  transports->push_back(std::move(transport));
  transports->push_back(
      std::make_unique<CudaPathView>(impl, Engine::kCopyEngine, "cuda.ce", TCA_PATH_CUDA_CE));
  transports->push_back(
      std::make_unique<CudaPathView>(impl, Engine::kSm, "cuda.sm", TCA_PATH_CUDA_SM));
  transports->push_back(std::make_unique<CudaPathView>(impl, Engine::kResident, "cuda.resident",
                                                       TCA_PATH_CUDA_RESIDENT));
  return TCA_SUCCESS;
}

}  // namespace tca
