// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Communication over tca: persistent collectives for the 1d allgather and the dot products,
// and for 2d chains built once that send pieces straight into the peers' buffers with a
// notification (slots 0-1, channels 0-1). On GPU memory every call is stream-ordered.
#include <tca/tca.h>
#include <tca/tca_coll.h>

#ifdef TCA_CG_CUDA
#include <tca/tca_coll_cuda.h>
#include <tca/tca_cuda.h>
#endif

#include <array>
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

// The allreduces of the CG iteration: first scalar and count.
constexpr std::array<std::pair<Scalar, int>, 4> kReductions = {
    {{kDotLocal, 1}, {kRhoLocal, 1}, {kNormXZLocal, 2}, {kSumLocal, 1}}};

// One message of a 2d exchange: a chain to `peer`.
struct Message {
  int peer = 0;
  tcaDesc desc = nullptr;
};

class TcaComm final : public Comm {
 public:
  TcaComm(const Layout& layout, Device device, const CommOptions& options)
      : layout_(layout),
        device_(device),
        algorithm_(static_cast<tcaCollAlgorithm>(options.tca_algorithm)) {}

  ~TcaComm() override {
    // Collective frees, in the same order on every rank.
    for (tcaColl coll : reductions_) {
      if (coll) tcaCollFree(coll);
    }
    if (allgather_) tcaCollFree(allgather_);
    for (std::vector<Message>* list : {&gather_, &reduce_}) {
      for (Message& message : *list) tcaDescFree(message.desc);
    }
    for (tcaHandle& handle : own_handles_) tcaDestroyHandle(&handle);
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

  bool stream_ordered() const override { return device_ == Device::kGpu; }

  void bind(Engine& engine) override {
    engine_ = &engine;
    buffers_ = engine.buffers();
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
    if (layout_.partition == Partition::kOneD) {
      check_tca(
          tcaCollNew(&allgather_, TCA_COLL_ALLGATHER, TCA_DOUBLE, TCA_SUM,
                     static_cast<size_t>(layout_.piece), buffers_.p, buffers_.p_full, &config),
          "tcaCollNew(allgather)");
    } else {
      build_chains();
    }
  }

  std::string describe() const override {
    std::string text;
    tcaCollAlgorithm algorithm;
    if (allgather_ && tcaCollGetAlgorithm(allgather_, &algorithm) == TCA_SUCCESS) {
      text = std::string("allgather ") + tcaCollAlgorithmName(algorithm) + ", ";
    } else if (!allgather_) {
      text = "2d chains, ";
    }
    if (reductions_[0] && tcaCollGetAlgorithm(reductions_[0], &algorithm) == TCA_SUCCESS) {
      text += std::string("allreduce ") + tcaCollAlgorithmName(algorithm);
    }
    return text;
  }

  void gather_p() override {
    if (allgather_) {
      run(allgather_);
      return;
    }
    exchange(gather_, gather_sources_, kGatherSlot, kGatherChannel);
  }

  void reduce_w() override {
    if (layout_.partition == Partition::kOneD) return;
    exchange(reduce_, reduce_sources_, kReduceSlot, kReduceChannel);
    engine_->sum_pieces(layout_.grid, layout_.grid_col);
  }

  void allreduce(Scalar local, int count) override {
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

  Layout layout_;
  Device device_;
  tcaCollAlgorithm algorithm_;
  Engine* engine_ = nullptr;
  Buffers buffers_;
  std::array<tcaColl, kReductions.size()> reductions_{};
  tcaColl allgather_ = nullptr;
  std::vector<Message> gather_, reduce_;
  std::vector<int> gather_sources_, reduce_sources_;
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
