// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The CUDA transport's table: start-up (device, peers), regions (IPC imports, pinned host
// memory) and the path views of TCA_PATH_CUDA_CE/_SM/_RESIDENT.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "tca/tca_cuda.h"
#include "transport/cuda/cuda_transport_impl.h"
#include "transport/job.h"

namespace tca {

namespace {

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

tcaResult CudaTransportImpl::init() {
  TCA_CHECK(read_path_overrides());  // before any collective: bad input changes nothing
  peers_.resize(job_.size());
  domain_ = cuda_domain(job_.domain(TCA_MEM_GPU));
  if (domain_ == nullptr) TCA_FAIL(TCA_ERROR_INTERNAL, "the CUDA transport needs the CUDA domain");
  domain_->on_release([this] { stop_resident(); });
  TCA_CHECK(choose_device());
  TCA_CHECK(exchange_with_peers());
  return calibrate();
}

tcaResult CudaTransportImpl::read_path_overrides() {
  std::string path;
  TCA_CHECK(setting_choice("TCA_CUDA_PATH", &path));
  if (path == "ce") engine_choice_.force = tuning::EngineChoice::Force::kCopyEngine;
  if (path == "sm") engine_choice_.force = tuning::EngineChoice::Force::kSm;
  int64_t bytes = 0;
  bool set = false;
  TCA_CHECK(setting_count("TCA_CUDA_CROSSOVER", &bytes, &set));
  if (set) engine_choice_.crossover_override = static_cast<uint64_t>(bytes);
  int64_t idle_us = 0;
  TCA_CHECK(setting_count("TCA_CUDA_RESIDENT_IDLE_US", &idle_us));
  resident_idle_ns_ = static_cast<uint64_t>(idle_us) * 1000;
  return TCA_SUCCESS;
}

// The domain chose the device; a device this transport cannot set up is given up (GPU calls
// then fail with the reason), but the rank still joins every collective.
tcaResult CudaTransportImpl::choose_device() {
  device_ = domain_->device();
  uuid_ = domain_->uuid();
  if (device_ < 0) return TCA_SUCCESS;
  if (set_up_device() != TCA_SUCCESS) {
    const std::string problem =
        fmt::format("setting up CUDA device {} failed: {}", device_, last_error_message());
    TCA_WARN("{}", problem);
    clear_last_error();
    domain_->disable(problem);
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
  int value = 0;
  TCA_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device_));
  limits_.multiprocessors = value;
  TCA_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxPitch, device_));
  limits_.max_pitch = static_cast<uint64_t>(value);
  limits_.write_value_ops = device_has_write_value_ops(device_);

  TCA_CHECK(make_device_memory(sizeof(uint64_t) * TCA_DEVICE_SIGNALS, &signals_));
  // Zero before a peer signals.
  TCA_CHECK(zero_and_wait(signals_.get(), sizeof(uint64_t) * TCA_DEVICE_SIGNALS));
  // A blocking stream: host kicks follow the work the application put on the legacy default
  // stream before them (a cudaMemcpy from pageable memory may return before its copy lands).
  TCA_CHECK(make_stream(cudaStreamDefault, &dma_stream_));
  const HostBlock& counters = job_.notify_counter_block();
  TCA_CHECK(domain_->pin(counters.data(), counters.bytes(), &counters_pinned_, &counters_device_));
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
  std::vector<GpuCard> cards(job_.size());
  TCA_CHECK(job_.bootstrap().allgather(&mine, cards.data(), sizeof(GpuCard)));
  if (device_ < 0) return TCA_SUCCESS;
  // Every rank of this host with a GPU is reached, also one that shares this rank's GPU: CUDA
  // IPC maps its allocations into this process on the same device (attach() refuses a mapping
  // that would alias another). Kernels of processes that share a GPU take turns (time slices),
  // so a GPU-side wait for such a peer costs a slice; host-kicked copies do not wait on the GPU.
  for (int peer = 0; peer < job_.size(); ++peer) {
    if (!cards[peer].has_device || !job_.same_host(peer)) continue;
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

  if (peer == job_.rank()) {
    state.control = job_.control_block();
    state.signals = static_cast<uint64_t*>(signals_.get());
  } else {
    const PeerInfo& info = job_.peer(peer);
    TCA_CHECK(PeerMapping::open(info.pid, info.control_fd, 0, job_.control_block_size(),
                                job_.memfd_name(peer, 0).c_str(), info.control_inode,
                                &state.control_mapping));
    state.control = state.control_mapping.data();
    void* signals = nullptr;
    TCA_CUDA_CHECK(cudaIpcOpenMemHandle(&signals, card.signals, cudaIpcMemLazyEnablePeerAccess));
    state.signals_mapping = IpcMapping(signals);
    state.signals = static_cast<uint64_t*>(signals);
  }
  TCA_CHECK(domain_->pin(state.control, job_.control_block_size(), &state.control_pinned,
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

tcaResult CudaTransportImpl::require_device() const {
  TCA_CHECK(domain_->require_device());
  if (device_ < 0) TCA_FAIL(TCA_ERROR_INTERNAL, "the CUDA transport has no device");
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::use_device() const { return domain_->use_device(); }

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
  if (domain_->owns_address(address)) return "this rank's own allocation";
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
      owner == job_.rank() ? job_.control_block() : peers_[owner].control;
  *issued = cell_at(const_cast<unsigned char*>(control), issued_id_offset(job_.size()))
                ->load(std::memory_order_acquire);
  *found = tca::read_record(control, id, out);
  return TCA_SUCCESS;
}

const std::atomic<uint64_t>* CudaTransportImpl::live_cell(int owner, uint64_t region_id) const {
  unsigned char* control = owner == job_.rank() ? job_.control_block() : peers_[owner].control;
  return cell_at(control, live_cell_offset(region_id));
}

tcaResult CudaTransportImpl::region_alive(const PeerRegion& region, bool* alive) {
  if (region.owner != job_.rank() && peers_[region.owner].control == nullptr)
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "rank {}'s control block is not mapped here", region.owner);
  *alive = live_cell(region)->load(std::memory_order_acquire) == region.id;
  return TCA_SUCCESS;
}

tcaResult CudaTransportImpl::host_device_address(PeerRegion& region,
                                                 std::vector<HostRegistration>* temporary,
                                                 unsigned char** out) {
  if (region.owner == job_.rank()) {
    void* host = reinterpret_cast<void*>(region.address);
    *out = domain_->mapped_host_address(host,
                                        region.bytes);  // tcaMalloc blocks, or pinned by the user
    if (*out == nullptr) {
      HostRegistration pinned;
      TCA_CHECK(domain_->pin(host, region.bytes, &pinned, out));
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
  TCA_CHECK(PeerMapping::open(region.owner_pid, region.wire.memfd, region.wire.memfd_offset,
                              region.bytes,
                              job_.memfd_name(region.owner, region.wire.memfd_serial).c_str(),
                              region.memfd_inode, &import.mapping));
  TCA_CHECK(domain_->pin(import.mapping.data(), region.bytes, &import.pinned, out));
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
  if (end.owner == job_.rank() && end.id == 0) {  // a tcaPut/tcaGet buffer in GPU memory
    *out = reinterpret_cast<unsigned char*>(end.address);
    return TCA_SUCCESS;
  }
  TCA_FAIL(TCA_ERROR_UNREACHABLE, "GPU region {} of rank {} is not mapped on rank {}", end.id,
           end.owner, job_.rank());
}

tcaResult CudaTransportImpl::device_address(PeerRegion& region, unsigned char** out) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  if (!reaches(region.owner))
    TCA_FAIL(TCA_ERROR_UNREACHABLE, "rank {} cannot reach rank {}'s memory from its GPU",
             job_.rank(), region.owner);
  std::vector<HostRegistration> none;  // registered regions keep their pinning
  return end_address(region, &none, out);
}

unsigned char* CudaTransportImpl::device_address_of_counter(const uint64_t* counter) const {
  const auto* base = job_.notify_counter_block().data();
  return counters_device_ + (reinterpret_cast<const unsigned char*>(counter) - base);
}

tcaResult make_cuda_transport(Job& job, int id,
                              std::vector<std::unique_ptr<Transport>>* transports) {
  auto transport = std::make_unique<CudaTransportImpl>(job, id);
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
