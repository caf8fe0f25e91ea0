// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A single rank: nothing to exchange (the engine aliases p into p_full and w into q, and the
// global scalars into the local ones), and plain memory.
#include <cstdlib>
#include <new>

#include "comm.h"
#include "control.h"

namespace tca_cg {
namespace {

class SelfComm final : public Comm {
 public:
  explicit SelfComm(CommKind kind) : kind_(kind) {}
  CommKind kind() const override { return kind_; }
  Allocator allocator(Device device) override;
  int scratch_pieces(const Layout&) const override { return 0; }
  void bind(Engine&) override {}
  bool stream_ordered() const override { return true; }
  void gather_p() override {}
  bool reduce_w(bool) override { return false; }
  void allreduce(Scalar, int) override {}
  std::string describe() const override { return "one rank: no communication"; }

 private:
  CommKind kind_;
};

}  // namespace

Allocator host_allocator() {
  return Allocator{[](size_t count) -> double* {
                     // 64-byte alignment, as cache lines; size rounded up as aligned_alloc wants.
                     const size_t bytes = ((count * sizeof(double) + 63) / 64) * 64;
                     return static_cast<double*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
                   },
                   [](double* block) { std::free(block); }};
}

Allocator SelfComm::allocator(Device device) {
  return device == Device::kCpu ? host_allocator() : gpu_allocator();
}

std::unique_ptr<Comm> make_self_comm(CommKind kind) { return std::make_unique<SelfComm>(kind); }

const char* comm_name(CommKind kind) {
  switch (kind) {
    case CommKind::kTca:
      return "tca";
    case CommKind::kMpi:
      return "mpi";
    case CommKind::kNccl:
      return "nccl";
  }
  return "?";
}

const char* tca_exchange_name(TcaExchange exchange) {
  switch (exchange) {
    case TcaExchange::kPush:
      return "push";
    case TcaExchange::kFusedDots:
      return "fused-dots";
    case TcaExchange::kFused:
      return "fused";
    case TcaExchange::kTeams:
      return "teams";
    case TcaExchange::kColl:
      break;
  }
  return "coll";
}

std::unique_ptr<Comm> make_comm(CommKind kind, const Layout& layout, Device device,
                                const CommOptions& options, std::string* why_not) {
  if (layout.ranks == 1) return make_self_comm(kind);
  switch (kind) {
    case CommKind::kTca:
      return make_tca_comm(layout, device, options);
    case CommKind::kMpi:
      *why_not = tca_apps::mpi_unavailable();
      if (!why_not->empty()) return nullptr;
#ifdef TCA_HARNESS_MPI
      return make_mpi_comm(layout);
#else
      return nullptr;
#endif
    case CommKind::kNccl:
      return make_nccl_comm(layout, why_not);
  }
  return nullptr;
}

}  // namespace tca_cg
