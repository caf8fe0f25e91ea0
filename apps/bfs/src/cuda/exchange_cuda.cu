// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Exchanges of GPU ranks: the buffers in GPU memory; tca's GPU collectives move them GPU to GPU
// in the engine's stream, MPI stages them through pinned host memory (MPI here is not
// CUDA-aware), NCCL (loaded at run time) moves them in the stream.
#include <tca/tca_coll_cuda.h>
#include <tca/tca_cuda.h>

#include <algorithm>
#include <climits>
#include <string>
#include <tca/tca_coll_device.cuh>
#include <vector>

#include "agree.h"
#include "control.h"
#include "cuda/cuda_util.h"
#include "exchange.h"
#include "mpi_check.h"
#include "tca_check.h"
#include "tca_harness/ranks.h"
#ifdef TCA_HARNESS_NCCL
#include "tca_harness/nccl.h"
#endif

namespace bfs {
namespace {

constexpr size_t kAlign = 256;

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// One iteration of a GPU collective run by this kernel's blocks (tca/tca_coll_device.cuh), or
// none where *skip is non-zero: every rank reads the same value there (it follows from summed
// counts), so every rank runs the same iterations. Block 0 first writes the GPU's clock at
// `started` (the start of the level's gather, for its timing).
__global__ void __launch_bounds__(1024)
    collective_unless_kernel(tcaDeviceColl coll, const unsigned long long* skip,
                             unsigned long long* started) {
  tca_apps::begin_dependent_kernel();  // lets the step's first kernel launch early where it is
                                       // (TCA_BFS_EARLY)
  if (started != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *started = globaltimer_ns();
  if (*skip != 0) return;
  tcaDeviceCollRun(coll);  // a failure is kept in the object: the next host call reports it
}

// The buffers' places in one block of GPU memory.
struct DeviceLayout {
  size_t frontier_bytes, counts_bytes, tree_entries;
  explicit DeviceLayout(const Partition& p)
      : frontier_bytes(aligned(p.padded() / 8)),
        counts_bytes(aligned(kCountWords * sizeof(int64_t))),
        tree_entries(p.padded()) {}
  size_t bytes() const {
    return 2 * frontier_bytes + 2 * counts_bytes + aligned(tree_entries * sizeof(int64_t)) +
           aligned(tree_entries * sizeof(int32_t));
  }
  // Points the exchange's buffers (and the sums) into `base`.
  void carve(unsigned char* base, uint64_t** frontier, int64_t*& counts, int64_t*& sums,
             int64_t*& parents, int32_t*& levels) const {
    frontier[0] = reinterpret_cast<uint64_t*>(base);
    frontier[1] = reinterpret_cast<uint64_t*>(base + frontier_bytes);
    counts = reinterpret_cast<int64_t*>(base + 2 * frontier_bytes);
    sums = reinterpret_cast<int64_t*>(base + 2 * frontier_bytes + counts_bytes);
    parents = reinterpret_cast<int64_t*>(base + 2 * frontier_bytes + 2 * counts_bytes);
    levels = reinterpret_cast<int32_t*>(reinterpret_cast<unsigned char*>(parents) +
                                        aligned(tree_entries * sizeof(int64_t)));
  }
};

class DeviceExchange : public Exchange {
 protected:
  DeviceExchange(const ExchangeSetup& setup)
      : setup_(setup),
        stream_(static_cast<cudaStream_t>(setup.stream)),
        words_(setup.partition.per_rank() / 64),
        per_(setup.partition.per_rank()),
        sums_host_(kCountWords) {}

  // Enqueues the copy of the summed counts to the host.
  void enqueue_fetch() {
    check_cuda(cudaMemcpyAsync(sums_host_.data(), sums_, kCountWords * sizeof(int64_t),
                               cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync");
  }
  Counts fetched() const { return Counts{sums_host_.data()[0], sums_host_.data()[1]}; }
  // The summed counts to the host (the level's one host round trip).
  Counts fetch_sums() {
    enqueue_fetch();
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return fetched();
  }

  ExchangeSetup setup_;
  cudaStream_t stream_;
  uint64_t words_, per_;
  int64_t* sums_ = nullptr;
  PinnedArray<int64_t> sums_host_;
};

// ---- tca: persistent GPU collectives, enqueued in the stream ----

class TcaDeviceExchange final : public DeviceExchange, public StreamOrdered {
 public:
  explicit TcaDeviceExchange(const ExchangeSetup& setup) : DeviceExchange(setup) {
    const DeviceLayout layout(setup.partition);
    void* base = nullptr;
    check_tca(tcaMalloc(&base, layout.bytes(), TCA_MEM_GPU), "tcaMalloc");
    base_ = base;
    zero_sync(base_, layout.bytes(), stream_);
    layout.carve(static_cast<unsigned char*>(base_), frontier_, counts_, sums_, parents_, levels_);
    tcaCollConfig config{};
    config.memory = TCA_MEM_GPU;
    const int rank = setup.rank;
    for (int parity = 0; parity < 2; ++parity)
      check_tca(tcaCollNew(&frontier_coll_[parity], TCA_COLL_ALLGATHER, TCA_INT64, TCA_SUM, words_,
                           frontier_[parity] + rank * words_, frontier_[parity], &config),
                "tcaCollNew (frontier allgather)");
    check_tca(tcaCollNew(&counts_coll_, TCA_COLL_ALLREDUCE, TCA_INT64, TCA_SUM, kCountWords,
                         counts_, sums_, &config),
              "tcaCollNew (counts allreduce)");
    check_tca(tcaCollNew(&parents_coll_, TCA_COLL_ALLGATHER, TCA_INT64, TCA_SUM, per_,
                         parents_ + rank * per_, parents_, &config),
              "tcaCollNew (parents allgather)");
    check_tca(tcaCollNew(&levels_coll_, TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, per_,
                         levels_ + rank * per_, levels_, &config),
              "tcaCollNew (levels allgather)");
    // The frontier gathers as kernels of ours, which can skip them (enqueue_gather); where tca
    // cannot give a kernel the program (ranks on other hosts), the stream form runs instead.
    for (int parity = 0; parity < 2; ++parity) {
      int blocks = 0, min_threads = 0, ll = 0, channels = 0;
      if (tcaCollDeviceHandle(frontier_coll_[parity], &frontier_device_[parity], &blocks,
                              &min_threads) != TCA_SUCCESS ||
          tcaCollGetProtocol(frontier_coll_[parity], &ll, &channels) != TCA_SUCCESS) {
        frontier_device_[parity] = nullptr;
        continue;
      }
      frontier_blocks_[parity] = blocks;
      frontier_threads_[parity] = std::max(min_threads, ll != 0 ? 512 : 1024);
    }
    set_up_pushed(layout.frontier_bytes);
  }

  ~TcaDeviceExchange() override {
    for (tcaColl c :
         {frontier_coll_[0], frontier_coll_[1], counts_coll_, parents_coll_, levels_coll_})
      if (c != nullptr) tcaCollFree(c);
    if (pushed_handle_made_) tcaDestroyHandle(&pushed_handle_);
    if (pushed_base_ != nullptr) tcaFree(pushed_base_);
    if (base_ != nullptr) tcaFree(base_);
  }

  void gather_frontier(int parity) override {
    check_tca(tcaCollStartStream(frontier_coll_[parity], stream_), "tcaCollStartStream (frontier)");
  }
  Counts reduce_counts() override {
    check_tca(tcaCollStartStream(counts_coll_, stream_), "tcaCollStartStream (counts)");
    return fetch_sums();
  }
  void enqueue_counts() override {
    check_tca(tcaCollStartStream(counts_coll_, stream_), "tcaCollStartStream (counts)");
    enqueue_fetch();
  }
  Counts host_sums() const override { return fetched(); }
  void enqueue_gather(int parity, const unsigned long long* skip,
                      unsigned long long* started) override {
    if (frontier_device_[parity] == nullptr) return gather_frontier(parity);
    collective_unless_kernel<<<frontier_blocks_[parity], frontier_threads_[parity], 0, stream_>>>(
        frontier_device_[parity], skip, started);
    check_cuda(cudaGetLastError(), "collective_unless_kernel (frontier)");
  }
  bool stamps_gather() const override {
    return frontier_device_[0] != nullptr && frontier_device_[1] != nullptr;
  }
  void enqueue_reduce() override {
    check_tca(tcaCollStartStream(counts_coll_, stream_), "tcaCollStartStream (counts)");
  }
  const int64_t* device_sums() const override { return sums_; }
  const PushedFrontiers* pushed_frontiers() const override {
    return pushed_.views != nullptr ? &pushed_ : nullptr;
  }
  void gather_tree() override {
    // Iterations run by our kernels report a failure (a peer's timeout) at the next host call.
    for (int parity = 0; parity < 2; ++parity) {
      if (frontier_device_[parity] == nullptr) continue;
      int blocks = 0, min_threads = 0;
      check_tca(tcaCollDeviceHandle(frontier_coll_[parity], &frontier_device_[parity], &blocks,
                                    &min_threads),
                "tcaCollDeviceHandle (frontier)");
    }
    check_tca(tcaCollStartStream(parents_coll_, stream_), "tcaCollStartStream (parents)");
    check_tca(tcaCollStartStream(levels_coll_, stream_), "tcaCollStartStream (levels)");
  }

 private:
  // The pushed frontiers: kPushedBuffers bitmaps in one region registered with tca, every
  // rank's views of every rank's copies. Collective; leaves pushed_.views null on every rank
  // where some rank cannot map some peer's region (ranks on other hosts), and on one rank (with
  // no peer to store into, the gather is a kernel that does nothing, a little cheaper than the
  // clearing the pushed levels need).
  void set_up_pushed(size_t bitmap_bytes) {
    const int ranks = setup_.partition.ranks();
    if (ranks == 1) return;
    check_tca(tcaMalloc(&pushed_base_, kPushedBuffers * bitmap_bytes, TCA_MEM_GPU), "tcaMalloc");
    zero_sync(pushed_base_, kPushedBuffers * bitmap_bytes, stream_);
    std::string reason;
    if (tcaCreateHandle(&pushed_handle_, pushed_base_, kPushedBuffers * bitmap_bytes,
                        TCA_MEM_GPU) == TCA_SUCCESS)
      pushed_handle_made_ = true;
    else
      reason = "rank " + std::to_string(setup_.rank) + " cannot register its frontiers (" +
               tcaGetLastErrorMessage() + ")";
    // Every rank takes part, whatever it holds: another's unregistered handle fails to map below.
    std::vector<tcaHandle> all(ranks);
    check_tca(tcaAllgatherHandles(&pushed_handle_, all.data()), "tcaAllgatherHandles");
    std::vector<uint32_t*> views(static_cast<size_t>(kPushedBuffers) * ranks, nullptr);
    for (int r = 0; r < ranks && reason.empty(); ++r)
      for (int b = 0; b < kPushedBuffers && reason.empty(); ++b) {
        void* view = nullptr;
        if (tcaDevicePointer(&view, &all[r], b * bitmap_bytes, bitmap_bytes) != TCA_SUCCESS)
          reason = "rank " + std::to_string(setup_.rank) + " cannot map rank " + std::to_string(r) +
                   "'s frontiers (" + tcaGetLastErrorMessage() + ")";
        views[static_cast<size_t>(b) * ranks + r] = static_cast<uint32_t*>(view);
      }
    if (!tca_harness::agreed_reason(reason, tca_apps::harness_control(), "a rank cannot map")
             .empty())
      return;
    views_.resize(views.size());
    copy_sync(views_.data(), views.data(), views.size() * sizeof(uint32_t*), cudaMemcpyHostToDevice,
              stream_);
    pushed_.ranks = ranks;
    for (int b = 0; b < kPushedBuffers; ++b)
      pushed_.local[b] =
          reinterpret_cast<uint32_t*>(static_cast<unsigned char*>(pushed_base_) + b * bitmap_bytes);
    pushed_.views = views_.data();
  }

  void* base_ = nullptr;
  void* pushed_base_ = nullptr;
  tcaHandle pushed_handle_{};
  bool pushed_handle_made_ = false;
  DeviceArray<uint32_t*> views_;
  PushedFrontiers pushed_;
  tcaDeviceColl frontier_device_[2] = {nullptr, nullptr};
  int frontier_blocks_[2] = {0, 0}, frontier_threads_[2] = {0, 0};
  tcaColl frontier_coll_[2] = {nullptr, nullptr};
  tcaColl counts_coll_ = nullptr, parents_coll_ = nullptr, levels_coll_ = nullptr;
};

// Why tca cannot join these ranks' GPU memory ("" where it can), on every rank. Peers on this
// host are reached by the CUDA path (the collectives run as GPU programs); peers on other hosts
// by a transport between hosts (UCX), whose collectives the host runs: the levels are then
// launched call by call (no CUDA graph can hold them).
std::string tca_gpu_unreachable(const ExchangeSetup& setup) {
  std::string reason;
  for (int peer = 0; peer < setup.partition.ranks() && reason.empty(); ++peer) {
    if (peer == setup.rank) continue;
    const char* name = nullptr;
    const char* table = nullptr;
    if (tcaAutoTransport(peer, TCA_MEM_GPU, TCA_MEM_GPU, 1, &name, &table) != TCA_SUCCESS)
      reason = "no transport of this build reaches rank " + std::to_string(peer) +
               "'s GPU memory from rank " + std::to_string(setup.rank) + " (" +
               tcaGetLastErrorMessage() + ")";
  }
  return tca_harness::agreed_reason(reason, tca_apps::harness_control(),
                                    "tca does not join every pair of ranks' GPU memory");
}

// ---- MPI: GPU data staged through pinned host memory (builds with MPI) ----
#ifdef TCA_HARNESS_MPI

class MpiDeviceExchange final : public DeviceExchange {
 public:
  explicit MpiDeviceExchange(const ExchangeSetup& setup)
      : DeviceExchange(setup),
        memory_(DeviceLayout(setup.partition).bytes()),
        frontier_host_(setup.partition.padded() / 64),
        counts_host_(kCountWords),
        parents_host_(setup.partition.padded()),
        levels_host_(setup.partition.padded()) {
    if (per_ > static_cast<uint64_t>(INT_MAX))
      throw Error("--comm mpi: a rank's share of the vertices exceeds MPI's int count");
    zero_sync(memory_.data(), memory_.bytes(), stream_);
    DeviceLayout(setup.partition)
        .carve(memory_.data(), frontier_, counts_, sums_, parents_, levels_);
  }

  void gather_frontier(int parity) override {
    uint64_t* host = frontier_host_.data();
    copy(host + setup_.rank * words_, frontier_[parity] + setup_.rank * words_,
         words_ * sizeof(uint64_t), cudaMemcpyDeviceToHost);
    wait();
    check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, host, static_cast<int>(words_),
                            MPI_UINT64_T, MPI_COMM_WORLD),
              "MPI_Allgather (frontier)");
    copy(frontier_[parity], host, frontier_host_.size() * sizeof(uint64_t), cudaMemcpyHostToDevice);
  }

  Counts reduce_counts() override {
    copy(counts_host_.data(), counts_, kCountWords * sizeof(int64_t), cudaMemcpyDeviceToHost);
    wait();
    Counts sums;
    int64_t total[kCountWords];
    check_mpi(MPI_Allreduce(counts_host_.data(), total, kCountWords, MPI_INT64_T, MPI_SUM,
                            MPI_COMM_WORLD),
              "MPI_Allreduce (counts)");
    sums.vertices = total[0];
    sums.arcs = total[1];
    return sums;
  }

  void gather_tree() override {
    const uint64_t first = setup_.rank * per_;
    copy(parents_host_.data() + first, parents_ + first, per_ * sizeof(int64_t),
         cudaMemcpyDeviceToHost);
    copy(levels_host_.data() + first, levels_ + first, per_ * sizeof(int32_t),
         cudaMemcpyDeviceToHost);
    wait();
    const int count = static_cast<int>(per_);
    check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, parents_host_.data(), count,
                            MPI_INT64_T, MPI_COMM_WORLD),
              "MPI_Allgather (parents)");
    check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, levels_host_.data(), count,
                            MPI_INT32_T, MPI_COMM_WORLD),
              "MPI_Allgather (levels)");
    copy(parents_, parents_host_.data(), parents_host_.size() * sizeof(int64_t),
         cudaMemcpyHostToDevice);
    copy(levels_, levels_host_.data(), levels_host_.size() * sizeof(int32_t),
         cudaMemcpyHostToDevice);
  }

 private:
  void copy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind) {
    check_cuda(cudaMemcpyAsync(to, from, bytes, kind, stream_), "cudaMemcpyAsync");
  }
  void wait() { check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

  DeviceArray<unsigned char> memory_;
  PinnedArray<uint64_t> frontier_host_;
  PinnedArray<int64_t> counts_host_;
  PinnedArray<int64_t> parents_host_;
  PinnedArray<int32_t> levels_host_;
};

#ifdef TCA_HARNESS_NCCL
#endif

// ---- NCCL: collectives on the GPU buffers, in the stream ----

class NcclDeviceExchange final : public DeviceExchange, public StreamOrdered {
 public:
  NcclDeviceExchange(const ExchangeSetup& setup, std::unique_ptr<tca_harness::Nccl> nccl)
      : DeviceExchange(setup),
        nccl_(std::move(nccl)),
        memory_(DeviceLayout(setup.partition).bytes()) {
    zero_sync(memory_.data(), memory_.bytes(), stream_);
    DeviceLayout(setup.partition)
        .carve(memory_.data(), frontier_, counts_, sums_, parents_, levels_);
  }

  void gather_frontier(int parity) override {
    check(nccl_->all_gather(frontier_[parity] + setup_.rank * words_, frontier_[parity], words_,
                            ncclUint64, stream_),
          "ncclAllGather (frontier)");
  }
  Counts reduce_counts() override {
    enqueue_counts();
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return fetched();
  }
  void enqueue_counts() override {
    check(nccl_->all_reduce(counts_, sums_, kCountWords, ncclInt64, ncclSum, stream_),
          "ncclAllReduce (counts)");
    enqueue_fetch();
  }
  Counts host_sums() const override { return fetched(); }
  void enqueue_gather(int parity, const unsigned long long*, unsigned long long*) override {
    gather_frontier(parity);
  }
  bool stamps_gather() const override { return false; }  // no kernel of ours in NCCL's gather
  void enqueue_reduce() override {
    check(nccl_->all_reduce(counts_, sums_, kCountWords, ncclInt64, ncclSum, stream_),
          "ncclAllReduce (counts)");
  }
  const int64_t* device_sums() const override { return sums_; }
  void gather_tree() override {
    const uint64_t first = setup_.rank * per_;
    check(nccl_->all_gather(parents_ + first, parents_, per_, ncclInt64, stream_),
          "ncclAllGather (parents)");
    check(nccl_->all_gather(levels_ + first, levels_, per_, ncclInt32, stream_),
          "ncclAllGather (levels)");
  }

 private:
  void check(ncclResult_t result, const char* call) const {
    if (result != ncclSuccess) throw Error(std::string(call) + ": " + nccl_->error_string(result));
  }

  std::unique_ptr<tca_harness::Nccl> nccl_;
  DeviceArray<unsigned char> memory_;
};
#endif

}  // namespace

std::unique_ptr<Exchange> make_device_exchange(CommKind kind, const ExchangeSetup& setup,
                                               std::string& unavailable) {
  switch (kind) {
    case CommKind::kTca:
      unavailable = tca_gpu_unreachable(setup);
      if (!unavailable.empty()) return nullptr;
      return std::make_unique<TcaDeviceExchange>(setup);
    case CommKind::kMpi:
#ifdef TCA_HARNESS_MPI
      return std::make_unique<MpiDeviceExchange>(setup);
#else
      unavailable = "this build has no MPI";
      return nullptr;
#endif
    case CommKind::kNccl: {
#ifdef TCA_HARNESS_NCCL
      auto nccl = std::make_unique<tca_harness::Nccl>();
      unavailable = nccl->open(tca_apps::harness_control());
      if (!unavailable.empty()) return nullptr;
      return std::make_unique<NcclDeviceExchange>(setup, std::move(nccl));
#else
      unavailable = "this build has no nccl.h";
      return nullptr;
#endif
    }
  }
  return nullptr;
}

}  // namespace bfs
