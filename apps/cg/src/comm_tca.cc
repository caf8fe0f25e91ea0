// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Communication over tca: persistent collectives for the 1d allgather and the dot products,
// and for 2d chains built once that send pieces straight into the peers' buffers with a
// notification (slots 0-1, channels 0-1). On GPU memory every call is stream-ordered. With
// --tca-exchange push (GPU), kernels store the pieces into the peers' buffers through tca's
// device pointers and count them in signal cells of a region of this comm, and the dot products
// meet in mailboxes of the same region (tca_push.h).
#include <tca/tca.h>
#include <tca/tca_coll.h>

#ifdef TCA_CG_CUDA
#include <cuda_runtime_api.h>
#include <tca/tca_coll_cuda.h>
#include <tca/tca_cuda.h>

#include "control.h"
#include "tca_push.h"
#endif

#include <array>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm.h"

namespace tca_cg {
namespace {

constexpr int kGatherSlot = 0;
constexpr int kReduceSlot = 1;
constexpr int kGatherChannel = 0;
constexpr int kReduceChannel = 1;

void check_tca(tcaResult result, const char* call) {
  if (result == TCA_SUCCESS) return;
  const std::string detail = tcaGetLastErrorMessage();
  throw std::runtime_error(std::string(call) + ": " +
                           (detail.empty() ? tcaGetErrorString(result) : detail));
}

// The allreduces of the CG iteration: first scalar and count (kDotLocal and kRhoLocal together:
// single-reduction CG's pair).
constexpr std::array<std::pair<Scalar, int>, 5> kReductions = {
    {{kDotLocal, 1}, {kRhoLocal, 1}, {kNormXZLocal, 2}, {kSumLocal, 1}, {kDotLocal, 2}}};

// One message of a 2d exchange: a chain to `peer`.
struct Message {
  int peer = 0;
  tcaDesc desc = nullptr;
};

#ifdef TCA_CG_CUDA
// The push exchange's region, one per comm on every rank (64-bit cells): the arrival counts of
// the gather and of the reduction (one cell per sender each), each exchange's push count and
// its blocks' arrival counter (the fused update of p has its own), the allreduce's sequence
// number, the allreduce's mailbox, and pipelined CG's pair mailbox with its count of posts.
struct PushCells {
  explicit PushCells(int ranks) : ranks(ranks) {}
  int ranks;
  size_t gather(int sender) const { return static_cast<size_t>(sender); }
  size_t reduce(int sender) const { return static_cast<size_t>(ranks + sender); }
  size_t gather_pushes() const { return static_cast<size_t>(2 * ranks); }
  size_t reduce_pushes() const { return gather_pushes() + 1; }
  size_t sequence() const { return gather_pushes() + 2; }
  size_t gather_blocks() const { return gather_pushes() + 3; }
  size_t reduce_blocks() const { return gather_pushes() + 4; }
  size_t fused_blocks() const { return gather_pushes() + 5; }
  size_t pair_posts() const { return gather_pushes() + 6; }
  size_t mailbox() const { return gather_pushes() + 8; }
  size_t pair_mailbox() const {
    return mailbox() + static_cast<size_t>(kMailboxCellsPerRank) * ranks;
  }
  size_t count() const {
    return pair_mailbox() + static_cast<size_t>(kMailboxCellsPerRank) * ranks;
  }
};

// Whether the host runs `coll`'s iterations (its ranks span hosts that CUDA IPC does not
// join): then no kernel has its program, and no CUDA graph can hold an iteration.
bool runs_on_host(tcaColl coll) {
  tcaDeviceColl program = nullptr;
  int blocks = 0;
  int threads = 0;
  return tcaCollDeviceHandle(coll, &program, &blocks, &threads) == TCA_ERROR_UNSUPPORTED;
}

uint64_t push_timeout_ns() {
  const char* text = std::getenv("TCA_TIMEOUT_MS");
  const long long ms = text ? std::atoll(text) : 0;
  return static_cast<uint64_t>(ms > 0 ? ms : 60000) * 1000000ull;
}
#endif

class TcaComm final : public Comm {
 public:
  TcaComm(const Layout& layout, Device device, const CommOptions& options)
      : layout_(layout),
        device_(device),
        algorithm_(static_cast<tcaCollAlgorithm>(options.tca_algorithm)),
        push_(device == Device::kGpu && options.tca_exchange != TcaExchange::kColl &&
              options.tca_exchange != TcaExchange::kTeams),
        fuse_dots_(device == Device::kGpu && (options.tca_exchange == TcaExchange::kFused ||
                                              options.tca_exchange == TcaExchange::kFusedDots)),
        fuse_p_(device == Device::kGpu && options.tca_exchange == TcaExchange::kFused),
        teams_(options.tca_exchange == TcaExchange::kTeams &&
               layout.partition == Partition::kTwoD) {}

  ~TcaComm() override {
    // Collective frees, in the same order on every rank.
    for (tcaColl coll : reductions_) {
      if (coll) tcaCollFree(coll);
    }
    if (allgather_) tcaCollFree(allgather_);
    if (row_allreduce_) tcaCollFree(row_allreduce_);
    if (column_allgather_) tcaCollFree(column_allgather_);
    for (tcaTeam team : {row_team_, column_team_}) {
      if (team != TCA_TEAM_INVALID) tcaTeamFree(team);
    }
    for (std::vector<Message>* list : {&gather_, &reduce_, &swap_}) {
      for (Message& message : *list) tcaDescFree(message.desc);
    }
    for (tcaHandle& handle : own_handles_) tcaDestroyHandle(&handle);
    if (cells_) tcaFree(cells_);
#ifdef TCA_CG_CUDA
    if (device_plan_) cudaFree(device_plan_);
#endif
  }

  CommKind kind() const override { return CommKind::kTca; }

  Allocator allocator(Device device) override {
    const tcaMemKind kind = device == Device::kGpu ? TCA_MEM_GPU : TCA_MEM_CPU;
    return Allocator{
        [kind](size_t count) -> double* {
          void* block = nullptr;
          if (tcaMalloc(&block, (count == 0 ? 1 : count) * sizeof(double), kind) != TCA_SUCCESS) {
            return nullptr;
          }
          return static_cast<double*>(block);
        },
        [](double* block) { tcaFree(block); }};
  }

  int scratch_pieces(const Layout& layout) const override {
    return layout.partition == Partition::kTwoD ? layout.grid : 0;
  }

  // Where the host runs the collectives (ranks on hosts CUDA IPC does not join), a CUDA graph
  // cannot hold them: the steps are then launched from the host each time.
  bool stream_ordered() const override { return device_ == Device::kGpu && !host_run_; }

  void bind(Engine& engine) override {
    engine_ = &engine;
    buffers_ = engine.buffers();
#ifdef TCA_CG_CUDA
    if (push_ && !build_push(&no_push_)) push_ = fuse_dots_ = fuse_p_ = false;
    if (push_) {
      if (fuse_p_) {
        PushFusion fusion;
        fusion.peers = gather_plan_.puts;
        for (int k = 0; k < gather_plan_.puts; ++k) {
          fusion.dst[k] = gather_plan_.dst[k];
          fusion.signal[k] = gather_plan_.signal[k];
        }
        for (int k = 0; k < gather_plan_.puts && !alt_dst_.empty(); ++k)
          fusion.dst_alt[k] = alt_dst_[k];
        fusion.blocks_done = fused_blocks_;
        fusion.pushes = gather_plan_.pushes;
        fused_push_ = engine.fuse_push(fusion, wait_of(gather_plan_));
        // Other writers of p than the update: pushed by the kernel, the SpMV waits.
        push_only_ = gather_plan_;
        push_only_.sources = 0;
        if (layout_.partition == Partition::kTwoD) fused_reduce_ = fuse_reduce(engine);
      }
      if (fuse_dots_) {
        // The plans in device memory (the allreduce's, then the pair's), read by the engine's
        // kernels: copied in the engine's stream and waited for, landed before any use and
        // held up by no other stream's work.
        const ReducePlan plans[2] = {reduce_mailbox_, pair_mailbox_};
        void* block = nullptr;
        const bool copied = cudaMalloc(&block, sizeof(plans)) == cudaSuccess &&
                            cudaMemcpyAsync(block, plans, sizeof(plans), cudaMemcpyHostToDevice,
                                            stream()) == cudaSuccess &&
                            cudaStreamSynchronize(stream()) == cudaSuccess;
        device_plan_ = block;  // freed with the object, copied or not
        if (!copied)
          throw std::runtime_error("--tca-exchange fused: copying the allreduce plan failed");
        const ReducePlan* device_plans = static_cast<const ReducePlan*>(device_plan_);
        fused_allreduce_ = engine.fuse_allreduce(device_plans);
        if (fuse_p_) engine.fuse_pair(device_plans + 1);
      }
      return;
    }
#endif
    tcaCollConfig config{};
    config.algorithm = algorithm_;
    config.memory = device_ == Device::kGpu ? TCA_MEM_GPU : TCA_MEM_CPU;
    double* scalars = buffers_.scalars;
    for (size_t k = 0; k < kReductions.size(); ++k) {
      const auto [local, count] = kReductions[k];
      check_tca(tcaCollNew(&reductions_[k], TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, count,
                           scalars + local, scalars + local + kGlobalOffset, &config),
                "tcaCollNew(allreduce)");
    }
#ifdef TCA_CG_CUDA
    host_run_ = device_ == Device::kGpu && runs_on_host(reductions_[0]);
#endif
    if (layout_.partition == Partition::kOneD) {
      check_tca(
          tcaCollNew(&allgather_, TCA_COLL_ALLGATHER, TCA_DOUBLE, TCA_SUM,
                     static_cast<size_t>(layout_.piece), buffers_.p, buffers_.p_full, &config),
          "tcaCollNew(allgather)");
    } else if (teams_) {
      build_teams(config);
    } else {
      build_chains();
    }
  }

  TcaExchange tca_exchange() const override {
    if (teams_) return TcaExchange::kTeams;
    if (fused_push_) return TcaExchange::kFused;
    if (fused_allreduce_) return TcaExchange::kFusedDots;
    return push_ ? TcaExchange::kPush : TcaExchange::kColl;
  }

  std::string describe() const override {
    if (push_) {
      std::string text = fused_push_ ? fused_text()
                         : layout_.partition == Partition::kOneD
                             ? "push: p's piece stored into every peer's p_full by a kernel"
                             : "push: pieces of p and w stored into the peers' buffers by kernels";
      if (fused_allreduce_ && !fused_push_) text = "fused-dots: " + text.substr(6);
      return text + (fused_allreduce_
                         ? ", dot products summed over the ranks by the kernels that form them"
                         : ", mailbox allreduce kernel");
    }
    std::string text = no_push_.empty() ? "" : "push not possible here (" + no_push_ + "): ";
    tcaCollAlgorithm algorithm;
    if (teams_) {
      text += "2d on the grid's teams: row allreduce " + algorithm_of(row_allreduce_) +
              ", swap with the transposed rank, column allgather " +
              algorithm_of(column_allgather_) + ", ";
    } else if (allgather_ && tcaCollGetAlgorithm(allgather_, &algorithm) == TCA_SUCCESS) {
      text += std::string("allgather ") + tcaCollAlgorithmName(algorithm) + ", ";
    } else if (!allgather_) {
      text += "2d chains, ";
    }
    if (reductions_[0] && tcaCollGetAlgorithm(reductions_[0], &algorithm) == TCA_SUCCESS) {
      text += std::string("allreduce ") + tcaCollAlgorithmName(algorithm);
    }
    return text;
  }

  std::string fused_text() const {
    if (layout_.partition == Partition::kOneD)
      return "fused: p's piece stored into every peer's p_full by the update of p, the SpMV waits "
             "for the peers' pieces";
    return std::string(
               "fused: p's piece stored into the grid column's p_full by the update of p, the "
               "SpMV waits for the peers' pieces; ") +
           (fused_reduce_ ? "w's pieces stored into the grid row's scratch by the SpMV's slab "
                            "sum, the sum of the pieces waits for the peers'"
                          : "w's pieces stored into the grid row's scratch by a kernel");
  }

  void gather_p() override {
#ifdef TCA_CG_CUDA
    if (fused_push_) {
      if (!engine_->take_pushed_p()) launch_push(push_only_, stream());
      return;
    }
    if (push_) {
      launch_push(gather_plan_, stream());
      return;
    }
#endif
    if (allgather_) {
      run(allgather_);
      return;
    }
    if (teams_) {
      // The transposed rank's piece lands in scratch, the grid column gathers its pieces.
      if (!swap_.empty()) exchange(swap_, swap_sources_, kGatherSlot, kGatherChannel);
      run(column_allgather_);
      return;
    }
    exchange(gather_, gather_sources_, kGatherSlot, kGatherChannel);
  }

  bool reduce_w(bool fuse_dot) override {
    if (layout_.partition == Partition::kOneD) return false;
#ifdef TCA_CG_CUDA
    if (push_) {
      // Fused: the SpMV's slab sum pushed w's pieces, sum_pieces waits for the peers'.
      if (!fused_reduce_) launch_push(reduce_plan_, stream());
      engine_->sum_pieces(layout_.grid, layout_.grid_col, fuse_dot);
      return fuse_dot;
    }
#endif
    if (teams_) {
      run(row_allreduce_);  // w, the grid row's partial products, summed in place
      take_own_piece();
      return false;
    }
    exchange(reduce_, reduce_sources_, kReduceSlot, kReduceChannel);
    engine_->sum_pieces(layout_.grid, layout_.grid_col, fuse_dot);
    return fuse_dot;
  }

  void allreduce(Scalar local, int count) override {
#ifdef TCA_CG_CUDA
    if (fused_allreduce_) return;  // summed over the ranks by the kernel that formed it
    if (push_) {
      launch_mailbox_allreduce(reduce_mailbox_, buffers_.scalars + local,
                               buffers_.scalars + local + kGlobalOffset, count, stream());
      return;
    }
#endif
    for (size_t k = 0; k < kReductions.size(); ++k) {
      if (kReductions[k].first == local && kReductions[k].second == count) {
        run(reductions_[k]);
        return;
      }
    }
    throw std::logic_error("tca comm: no allreduce of scalar " + std::to_string(local));
  }

 private:
  tcaHandle register_region(double* base, int64_t count) {
    const tcaMemKind kind = device_ == Device::kGpu ? TCA_MEM_GPU : TCA_MEM_CPU;
    tcaHandle handle;
    check_tca(tcaCreateHandle(&handle, base, count * sizeof(double), kind), "tcaCreateHandle");
    own_handles_.push_back(handle);
    return handle;
  }

  std::vector<tcaHandle> all_handles(const tcaHandle& mine) {
    std::vector<tcaHandle> all(layout_.ranks);
    check_tca(tcaAllgatherHandles(&mine, all.data()), "tcaAllgatherHandles");
    return all;
  }

  Message chain(int peer, const tcaHandle& dst, size_t dst_offset, const tcaHandle& src,
                size_t src_offset, size_t bytes, int slot, int channel) {
    Message message;
    message.peer = peer;
    check_tca(tcaDescNew(&message.desc), "tcaDescNew");
    check_tca(tcaDescSetMemcpy(message.desc, &dst, dst_offset, &src, src_offset, bytes,
                               TCA_FLAG_NOTIFY, slot),
              "tcaDescSetMemcpy");
    check_tca(tcaDescSet(message.desc, channel), "tcaDescSet");
    return message;
  }

  // Rank (i, j) sends its piece to grid column i (offset j*m of their column block) and
  // receives column block j from grid row j. The row reduction sends piece k of w to rank
  // (i, k) (scratch piece j there) and receives from every other rank of grid row i.
  void build_chains() {
    const int s = layout_.grid, i = layout_.grid_row, j = layout_.grid_col;
    const size_t piece_bytes = static_cast<size_t>(layout_.piece) * sizeof(double);
    const tcaHandle p = register_region(buffers_.p, layout_.piece);
    const tcaHandle p_full = register_region(buffers_.p_full, layout_.block.cols_padded);
    const tcaHandle w = register_region(buffers_.w, layout_.block.rows_padded);
    const tcaHandle scratch = register_region(buffers_.scratch, s * layout_.piece);
    const std::vector<tcaHandle> peers_p_full = all_handles(p_full);
    const std::vector<tcaHandle> peers_scratch = all_handles(scratch);
    for (int k = 0; k < s; ++k) {
      const int peer = layout_.rank_at(k, i);
      gather_.push_back(chain(peer, peers_p_full[peer], j * piece_bytes, p, 0, piece_bytes,
                              kGatherSlot, kGatherChannel));
      gather_sources_.push_back(layout_.rank_at(j, k));
      if (k == j) continue;
      const int row_peer = layout_.rank_at(i, k);
      reduce_.push_back(chain(row_peer, peers_scratch[row_peer], j * piece_bytes, w,
                              k * piece_bytes, piece_bytes, kReduceSlot, kReduceChannel));
      reduce_sources_.push_back(row_peer);
    }
  }

  // The 2d exchanges on teams of the s x s grid: rank (i, j) is rank j of row team i and rank i
  // of column team j. The row's partial products w (its row block, s pieces) are summed by an
  // allreduce in place over the row team; this rank keeps piece j. Column block j of p, what
  // the SpMV reads, is row block j: pieces (j, 0..s-1). Rank (i, j) sends its piece to the
  // transposed rank (j, i) (into scratch; the diagonal keeps its own), so that rank (k, j) holds
  // piece (j, k), and an allgather over column team j puts the s pieces in order into p_full.
  void build_teams(tcaCollConfig config) {
    const int i = layout_.grid_row, j = layout_.grid_col;
    const size_t piece = static_cast<size_t>(layout_.piece);
    check_tca(tcaTeamSplit(TCA_TEAM_WORLD, i, j, &row_team_), "tcaTeamSplit(grid row)");
    check_tca(tcaTeamSplit(TCA_TEAM_WORLD, j, i, &column_team_), "tcaTeamSplit(grid column)");
    config.team = row_team_;
    check_tca(
        tcaCollNew(&row_allreduce_, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM,
                   static_cast<size_t>(layout_.block.rows_padded), buffers_.w, buffers_.w, &config),
        "tcaCollNew(row allreduce)");
    config.team = column_team_;
    double* block = i == j ? buffers_.p : buffers_.scratch;
    check_tca(tcaCollNew(&column_allgather_, TCA_COLL_ALLGATHER, TCA_DOUBLE, TCA_SUM, piece, block,
                         buffers_.p_full, &config),
              "tcaCollNew(column allgather)");
    const tcaHandle scratch = register_region(buffers_.scratch, layout_.piece);
    const std::vector<tcaHandle> peers_scratch = all_handles(scratch);
    if (i == j) return;
    const tcaHandle p = register_region(buffers_.p, layout_.piece);
    const int peer = layout_.rank_at(j, i);
    swap_.push_back(chain(peer, peers_scratch[peer], 0, p, 0, piece * sizeof(double), kGatherSlot,
                          kGatherChannel));
    swap_sources_.push_back(peer);
  }

  // q = piece j of the summed w (what sum_pieces makes of the chains' pieces).
  void take_own_piece() {
    const size_t bytes = static_cast<size_t>(layout_.piece) * sizeof(double);
    const double* from = buffers_.w + static_cast<int64_t>(layout_.grid_col) * layout_.piece;
#ifdef TCA_CG_CUDA
    if (device_ == Device::kGpu) {
      if (cudaMemcpyAsync(buffers_.q, from, bytes, cudaMemcpyDeviceToDevice, stream()) !=
          cudaSuccess)
        throw std::runtime_error("--tca-exchange teams: copying the summed piece failed");
      return;
    }
#endif
    std::memcpy(buffers_.q, from, bytes);
  }

  static std::string algorithm_of(tcaColl coll) {
    tcaCollAlgorithm algorithm;
    if (!coll || tcaCollGetAlgorithm(coll, &algorithm) != TCA_SUCCESS) return "?";
    return tcaCollAlgorithmName(algorithm);
  }

  void exchange(const std::vector<Message>& messages, const std::vector<int>& sources, int slot,
                int channel) {
#ifdef TCA_CG_CUDA
    if (device_ == Device::kGpu) {
      auto stream = static_cast<cudaStream_t>(buffers_.stream);
      for (const Message& message : messages) {
        check_tca(tcaStartDMADescStream(message.desc, stream), "tcaStartDMADescStream");
      }
      for (int source : sources) {
        check_tca(tcaWaitDMARecvDescStream(source, slot, stream), "tcaWaitDMARecvDescStream");
      }
      return;
    }
#endif
    for (const Message& message : messages)
      check_tca(tcaStartDMADesc(message.desc), "tcaStartDMADesc");
    for (int source : sources)
      check_tca(tcaWaitDMARecvDesc(source, slot, nullptr), "tcaWaitDMARecvDesc");
    check_tca(tcaWaitDMAC(channel), "tcaWaitDMAC");
  }

  void run(tcaColl coll) {
#ifdef TCA_CG_CUDA
    if (device_ == Device::kGpu) {
      check_tca(tcaCollStartStream(coll, static_cast<cudaStream_t>(buffers_.stream)),
                "tcaCollStartStream");
      return;
    }
#endif
    check_tca(tcaCollStart(coll), "tcaCollStart");
    check_tca(tcaCollWait(coll), "tcaCollWait");
  }

#ifdef TCA_CG_CUDA
  cudaStream_t stream() const { return static_cast<cudaStream_t>(buffers_.stream); }

  // Every rank's view of `region` (registered by each rank at the same size): device pointers.
  // A rank this one's kernels cannot reach (another host) gets nullptr and sets unreachable_.
  std::vector<char*> device_views(const tcaHandle& mine, size_t bytes) {
    const std::vector<tcaHandle> all = all_handles(mine);
    std::vector<char*> views(layout_.ranks);
    for (int r = 0; r < layout_.ranks; ++r) {
      void* view = nullptr;
      if (tcaDevicePointer(&view, &all[r], 0, bytes) != TCA_SUCCESS && unreachable_.empty()) {
        unreachable_ = "rank " + std::to_string(r) + ": " + tcaGetLastErrorMessage();
      }
      views[r] = static_cast<char*>(view);
    }
    return views;
  }

  // The push exchange: the cells region, then the plans of the gather (1d: this rank's piece
  // into every peer's p_full; 2d: into the p_full of grid column i's ranks), the 2d reduction
  // and the allreduce. Collective; false on every rank, with *why_not, where some rank's kernels
  // cannot reach every peer's memory (then the collectives serve instead).
  bool build_push(std::string* why_not) {
    const int ranks = layout_.ranks, me = layout_.rank;
    if (ranks > kPushMaxRanks || ranks > kPushMaxPuts) {
      *why_not = "at most " + std::to_string(kPushMaxPuts) + " ranks";
      return false;
    }
    const PushCells cells(ranks);
    const size_t cell_bytes = cells.count() * sizeof(uint64_t);
    void* block = nullptr;
    check_tca(tcaMalloc(&block, cell_bytes, TCA_MEM_GPU), "tcaMalloc");
    cells_ = block;
    // Zeroed in the engine's stream, waited for (no device-wide wait: nothing else's work).
    if (cudaMemsetAsync(cells_, 0, cell_bytes, stream()) != cudaSuccess ||
        cudaStreamSynchronize(stream()) != cudaSuccess)
      throw std::runtime_error("--tca-exchange push: clearing the signal cells failed");
    const uint64_t timeout = push_timeout_ns();
    const tcaHandle cell_handle = register_bytes(cells_, cell_bytes);
    std::vector<uint64_t*> peer_cells;
    for (char* view : device_views(cell_handle, cell_bytes))
      peer_cells.push_back(reinterpret_cast<uint64_t*>(view));
    uint64_t* own = static_cast<uint64_t*>(cells_);

    const int64_t m = layout_.piece;
    const size_t piece_bytes = static_cast<size_t>(m) * sizeof(double);
    const tcaHandle p_full = register_region(buffers_.p_full, layout_.block.cols_padded);
    const std::vector<char*> p_fulls =
        device_views(p_full, static_cast<size_t>(layout_.block.cols_padded) * sizeof(double));
    auto add_put = [&](PushPlan& plan, int peer, double* dst, const double* src, size_t signal) {
      const int k = plan.puts++;
      plan.dst[k] = dst;
      plan.src[k] = src;
      plan.count[k] = m;
      plan.signal[k] = peer_cells[peer] + signal;
    };
    auto add_source = [&](PushPlan& plan, size_t cell) {
      plan.arrived[plan.sources++] = own + cell;
    };
    gather_plan_.pushes = own + cells.gather_pushes();
    gather_plan_.blocks_done = reinterpret_cast<unsigned*>(own + cells.gather_blocks());
    gather_plan_.timeout_ns = timeout;
    reduce_plan_.pushes = own + cells.reduce_pushes();
    reduce_plan_.blocks_done = reinterpret_cast<unsigned*>(own + cells.reduce_blocks());
    reduce_plan_.timeout_ns = timeout;
    fused_blocks_ = reinterpret_cast<unsigned*>(own + cells.fused_blocks());
    if (layout_.partition == Partition::kOneD) {
      // The engine's second p_full (pipelined CG), where it has one: every rank has, or none.
      std::vector<char*> alt_fulls;
      if (buffers_.p_full_alt != nullptr) {
        const tcaHandle alt = register_region(buffers_.p_full_alt, layout_.block.cols_padded);
        alt_fulls =
            device_views(alt, static_cast<size_t>(layout_.block.cols_padded) * sizeof(double));
      }
      for (int peer = 0; peer < ranks; ++peer) {
        if (peer == me) continue;
        double* dst = reinterpret_cast<double*>(p_fulls[peer] + me * piece_bytes);
        add_put(gather_plan_, peer, dst, buffers_.p, cells.gather(me));
        add_source(gather_plan_, cells.gather(peer));
        if (!alt_fulls.empty())
          alt_dst_.push_back(reinterpret_cast<double*>(alt_fulls[peer] + me * piece_bytes));
      }
    } else {
      const int s = layout_.grid, i = layout_.grid_row, j = layout_.grid_col;
      const tcaHandle scratch = register_region(buffers_.scratch, s * m);
      const std::vector<char*> scratches =
          device_views(scratch, static_cast<size_t>(s) * piece_bytes);
      for (int k = 0; k < s; ++k) {
        const int peer = layout_.rank_at(k, i);
        add_put(gather_plan_, peer, reinterpret_cast<double*>(p_fulls[peer] + j * piece_bytes),
                buffers_.p, cells.gather(me));
        const int source = layout_.rank_at(j, k);
        add_source(gather_plan_, cells.gather(source));
        if (k == j) continue;
        const int row_peer = layout_.rank_at(i, k);
        add_put(reduce_plan_, row_peer,
                reinterpret_cast<double*>(scratches[row_peer] + j * piece_bytes),
                buffers_.w + k * m, cells.reduce(me));
        add_source(reduce_plan_, cells.reduce(row_peer));
      }
    }
    reduce_mailbox_.ranks = ranks;
    reduce_mailbox_.rank = me;
    for (int r = 0; r < ranks; ++r) reduce_mailbox_.mailbox[r] = peer_cells[r] + cells.mailbox();
    reduce_mailbox_.sequence = own + cells.sequence();
    reduce_mailbox_.timeout_ns = timeout;
    pair_mailbox_ = reduce_mailbox_;
    for (int r = 0; r < ranks; ++r) pair_mailbox_.mailbox[r] = peer_cells[r] + cells.pair_mailbox();
    pair_mailbox_.sequence = own + cells.pair_posts();
    // Every rank's kernels reach every peer, or none pushes; and every rank's region is clear
    // before any rank's first put.
    const int reachable =
        tca_apps::allreduce<int32_t>(unreachable_.empty() ? 1 : 0, tca_apps::Op::kMin);
    if (!reachable) {
      *why_not = unreachable_.empty() ? "another rank's kernels cannot reach every peer"
                                      : "no device pointer to " + unreachable_;
      return false;
    }
    check_tca(tcaBarrier(), "tcaBarrier");
    return true;
  }

  // 2d, fused: the SpMV's slab sum stores w's pieces where the row reduction's push kernel
  // would, raising the same cells and counting the same pushes (the kernel then never runs).
  bool fuse_reduce(Engine& engine) {
    PieceFusion fusion;
    fusion.piece = layout_.piece;
    fusion.pieces = layout_.grid;
    fusion.puts = reduce_plan_.puts;
    for (int k = 0; k < reduce_plan_.puts; ++k) {
      const int64_t piece = (reduce_plan_.src[k] - buffers_.w) / layout_.piece;
      fusion.dst[piece] = reduce_plan_.dst[k];
      fusion.signal[k] = reduce_plan_.signal[k];
    }
    fusion.blocks_done = reduce_plan_.blocks_done;
    fusion.pushes = reduce_plan_.pushes;
    return engine.fuse_reduce(fusion, wait_of(reduce_plan_));
  }

  // What a kernel that reads `plan`'s pieces waits for in place of the plan's own wait.
  static PushWait wait_of(const PushPlan& plan) {
    PushWait wait;
    wait.sources = plan.sources;
    for (int k = 0; k < plan.sources; ++k) wait.arrived[k] = plan.arrived[k];
    wait.pushes = plan.pushes;
    wait.timeout_ns = plan.timeout_ns;
    return wait;
  }

  tcaHandle register_bytes(void* base, size_t bytes) {
    tcaHandle handle;
    check_tca(tcaCreateHandle(&handle, base, bytes, TCA_MEM_GPU), "tcaCreateHandle");
    own_handles_.push_back(handle);
    return handle;
  }

  PushPlan gather_plan_;
  PushPlan reduce_plan_;
  PushPlan push_only_;  // fused: the gather's puts without its wait
  ReducePlan reduce_mailbox_;
  ReducePlan pair_mailbox_;       // pipelined CG's posted pairs (engine.h, fuse_pair)
  std::vector<double*> alt_dst_;  // 1d: each put's destination in the peer's second p_full
  unsigned* fused_blocks_ = nullptr;
  std::string unreachable_;  // a peer this rank's kernels cannot reach, and why
#endif
  std::string no_push_;  // why the push exchange was asked for but could not run

  Layout layout_;
  Device device_;
  tcaCollAlgorithm algorithm_;
  bool push_ = false;
  bool fuse_dots_ = false;        // asked for kFused or kFusedDots
  bool fuse_p_ = false;           // asked for kFused
  bool teams_ = false;            // kTeams with the 2d partition
  bool fused_allreduce_ = false;  // the engine took the allreduce
  bool fused_push_ = false;       // the engine took the push of p
  bool fused_reduce_ = false;     // the engine took the push of w's pieces (2d)
  bool host_run_ = false;         // the host runs the collectives' iterations
  void* cells_ = nullptr;
  void* device_plan_ = nullptr;
  Engine* engine_ = nullptr;
  Buffers buffers_;
  std::array<tcaColl, kReductions.size()> reductions_{};
  tcaColl allgather_ = nullptr;
  tcaTeam row_team_ = TCA_TEAM_INVALID, column_team_ = TCA_TEAM_INVALID;
  tcaColl row_allreduce_ = nullptr, column_allgather_ = nullptr;
  std::vector<Message> gather_, reduce_, swap_;
  std::vector<int> gather_sources_, reduce_sources_, swap_sources_;
  std::vector<tcaHandle> own_handles_;
};

}  // namespace

std::unique_ptr<Comm> make_tca_comm(const Layout& layout, Device device,
                                    const CommOptions& options) {
#ifndef TCA_CG_CUDA
  if (device == Device::kGpu) throw std::runtime_error("--comm tca on the GPU needs a CUDA build");
#endif
  return std::make_unique<TcaComm>(layout, device, options);
}

}  // namespace tca_cg
