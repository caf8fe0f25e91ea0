// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Communication over NCCL (GPU buffers, loaded at run time by the harness): ncclAllGather and
// ncclAllReduce, and for 2d the same direct exchanges as tca's chains as grouped
// ncclSend / ncclRecv on the one communicator of all ranks. The communicator (and the loaded
// library) is made once and kept for every configuration of the run (release_shared_comms
// frees it before MPI_Finalize): on 4 H100, a second NCCL configuration that destroyed the
// first one's communicator, unloaded the library and made its own never started.
#include "comm.h"

#ifdef TCA_HARNESS_NCCL
#include <array>
#include <memory>
#include <stdexcept>

#include "control.h"
#include "tca_harness/nccl.h"
#endif

namespace tca_cg {

#ifdef TCA_HARNESS_NCCL
namespace {

// The run's one NCCL communicator, made by the first NCCL configuration.
std::shared_ptr<tca_harness::Nccl>& shared_nccl() {
  static std::shared_ptr<tca_harness::Nccl> nccl;
  return nccl;
}

std::shared_ptr<tca_harness::Nccl> acquire_nccl() {
  if (!shared_nccl()) shared_nccl() = std::make_shared<tca_harness::Nccl>();
  return shared_nccl();
}

class NcclComm final : public Comm {
 public:
  explicit NcclComm(const Layout& layout)
      : layout_(layout), nccl_holder_(acquire_nccl()), nccl_(*nccl_holder_) {}

  // Collective: "" once NCCL is ready (decided once per run).
  std::string open() { return nccl_.open(tca_apps::harness_control()); }

  CommKind kind() const override { return CommKind::kNccl; }
  Allocator allocator(Device) override { return gpu_allocator(); }
  int scratch_pieces(const Layout& layout) const override {
    return layout.partition == Partition::kTwoD ? layout.grid : 0;
  }
  bool stream_ordered() const override { return true; }

  void bind(Engine& engine) override {
    if (engine.device() != Device::kGpu) throw std::runtime_error("--comm nccl needs --device gpu");
    engine_ = &engine;
    buffers_ = engine.buffers();
    stream_ = static_cast<cudaStream_t>(buffers_.stream);
  }

  void gather_p() override {
    const size_t m = static_cast<size_t>(layout_.piece);
    if (layout_.partition == Partition::kOneD) {
      nccl_.check(nccl_.all_gather(buffers_.p, buffers_.p_full, m, ncclDouble, stream_),
                  "ncclAllGather");
      return;
    }
    // Rank (i, j): its piece to grid column i; column block j from grid row j.
    const int s = layout_.grid, i = layout_.grid_row, j = layout_.grid_col;
    nccl_.check(nccl_.group_start(), "ncclGroupStart");
    for (int k = 0; k < s; ++k) {
      nccl_.check(nccl_.send(buffers_.p, m, ncclDouble, layout_.rank_at(k, i), stream_),
                  "ncclSend");
      nccl_.check(
          nccl_.recv(buffers_.p_full + k * m, m, ncclDouble, layout_.rank_at(j, k), stream_),
          "ncclRecv");
    }
    nccl_.check(nccl_.group_end(), "ncclGroupEnd");
  }

  bool reduce_w(bool fuse_dot) override {
    if (layout_.partition == Partition::kOneD) return false;
    const size_t m = static_cast<size_t>(layout_.piece);
    const int s = layout_.grid, i = layout_.grid_row, j = layout_.grid_col;
    nccl_.check(nccl_.group_start(), "ncclGroupStart");
    for (int k = 0; k < s; ++k) {
      if (k == j) continue;
      const int peer = layout_.rank_at(i, k);
      nccl_.check(nccl_.send(buffers_.w + k * m, m, ncclDouble, peer, stream_), "ncclSend");
      nccl_.check(nccl_.recv(buffers_.scratch + k * m, m, ncclDouble, peer, stream_), "ncclRecv");
    }
    nccl_.check(nccl_.group_end(), "ncclGroupEnd");
    engine_->sum_pieces(s, j, fuse_dot);
    return fuse_dot;
  }

  void allreduce(Scalar local, int count) override {
    double* scalars = buffers_.scalars;
    nccl_.check(nccl_.all_reduce(scalars + local, scalars + local + kGlobalOffset,
                                 static_cast<size_t>(count), ncclDouble, ncclSum, stream_),
                "ncclAllReduce");
  }

 private:
  Layout layout_;
  std::shared_ptr<tca_harness::Nccl> nccl_holder_;
  tca_harness::Nccl& nccl_;
  Engine* engine_ = nullptr;
  Buffers buffers_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<Comm> make_nccl_comm(const Layout& layout, std::string* why_not) {
  auto comm = std::make_unique<NcclComm>(layout);
  const std::string reason = comm->open();
  if (!reason.empty()) {
    if (why_not) *why_not = reason;
    return nullptr;
  }
  return comm;
}

void release_shared_comms() { shared_nccl().reset(); }

#else

void release_shared_comms() {}

std::unique_ptr<Comm> make_nccl_comm(const Layout&, std::string* why_not) {
  if (why_not) *why_not = "this build of tca-cg has no NCCL (CUDA and nccl.h are needed)";
  return nullptr;
}

#endif

}  // namespace tca_cg
