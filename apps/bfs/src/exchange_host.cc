// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Exchanges of CPU ranks: buffers in host memory, moved by tca collectives or by MPI.
#include <tca/tca_coll.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "agree.h"
#include "control.h"
#include "exchange.h"
#include "mpi_check.h"
#include "tca_check.h"

namespace bfs {
namespace {

// The buffers of a host exchange, in one allocation layout shared by both kinds.
struct HostLayout {
  uint64_t frontier_words;  // per parity
  uint64_t entries;         // padded tree entries
  size_t bytes() const {
    return (2 * frontier_words + 2 * kCountWords) * sizeof(uint64_t) + entries * sizeof(int64_t) +
           entries * sizeof(int32_t);
  }
};

// Frontier bitmaps (two parities), counts and their sums, parents, levels: one block.
void carve(unsigned char* base, const HostLayout& layout, uint64_t** frontier, int64_t*& counts,
           int64_t*& sums, int64_t*& parents, int32_t*& levels) {
  frontier[0] = reinterpret_cast<uint64_t*>(base);
  frontier[1] = frontier[0] + layout.frontier_words;
  counts = reinterpret_cast<int64_t*>(frontier[1] + layout.frontier_words);
  sums = counts + kCountWords;
  parents = sums + kCountWords;
  levels = reinterpret_cast<int32_t*>(parents + layout.entries);
}

class TcaHostExchange final : public Exchange {
 public:
  explicit TcaHostExchange(const ExchangeSetup& setup) {
    const Partition& p = setup.partition;
    layout_ = HostLayout{p.padded() / 64, p.padded()};
    void* base = nullptr;
    check_tca(tcaMalloc(&base, layout_.bytes(), TCA_MEM_CPU), "tcaMalloc");
    base_ = base;
    std::memset(base_, 0, layout_.bytes());
    carve(static_cast<unsigned char*>(base_), layout_, frontier_, counts_, sums_, parents_,
          levels_);
    const uint64_t words = p.per_rank() / 64, per = p.per_rank();
    tcaCollConfig config{};
    config.memory = TCA_MEM_CPU;
    for (int parity = 0; parity < 2; ++parity)
      check_tca(tcaCollNew(&frontier_coll_[parity], TCA_COLL_ALLGATHER, TCA_INT64, TCA_SUM, words,
                           frontier_[parity] + setup.rank * words, frontier_[parity], &config),
                "tcaCollNew (frontier allgather)");
    check_tca(tcaCollNew(&counts_coll_, TCA_COLL_ALLREDUCE, TCA_INT64, TCA_SUM, kCountWords,
                         counts_, sums_, &config),
              "tcaCollNew (counts allreduce)");
    check_tca(tcaCollNew(&parents_coll_, TCA_COLL_ALLGATHER, TCA_INT64, TCA_SUM, per,
                         parents_ + setup.rank * per, parents_, &config),
              "tcaCollNew (parents allgather)");
    check_tca(tcaCollNew(&levels_coll_, TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, per,
                         levels_ + setup.rank * per, levels_, &config),
              "tcaCollNew (levels allgather)");
  }

  ~TcaHostExchange() override {
    for (tcaColl c :
         {frontier_coll_[0], frontier_coll_[1], counts_coll_, parents_coll_, levels_coll_})
      if (c != nullptr) tcaCollFree(c);
    if (base_ != nullptr) tcaFree(base_);
  }

  void gather_frontier(int parity) override { run(frontier_coll_[parity], "frontier allgather"); }

  Counts reduce_counts() override {
    run(counts_coll_, "counts allreduce");
    return Counts{sums_[0], sums_[1]};
  }

  void gather_tree() override {
    run(parents_coll_, "parents allgather");
    run(levels_coll_, "levels allgather");
  }

 private:
  static void run(tcaColl coll, const char* what) {
    check_tca(tcaCollStart(coll), what);
    check_tca(tcaCollWait(coll), what);
  }

  HostLayout layout_{};
  void* base_ = nullptr;
  int64_t* sums_ = nullptr;
  tcaColl frontier_coll_[2] = {nullptr, nullptr};
  tcaColl counts_coll_ = nullptr, parents_coll_ = nullptr, levels_coll_ = nullptr;
};

#ifdef TCA_HARNESS_MPI
// --comm mpi: MPI collectives over MPI_COMM_WORLD (the control layer's MPI backend only).
class MpiHostExchange final : public Exchange {
 public:
  explicit MpiHostExchange(const ExchangeSetup& setup) {
    const Partition& p = setup.partition;
    if (p.per_rank() > static_cast<uint64_t>(INT_MAX))
      throw Error("--comm mpi: a rank's share of the vertices exceeds MPI's int count");
    layout_ = HostLayout{p.padded() / 64, p.padded()};
    base_ = static_cast<unsigned char*>(std::aligned_alloc(64, (layout_.bytes() + 63) / 64 * 64));
    if (base_ == nullptr) throw Error("out of host memory for the exchange buffers");
    std::memset(base_, 0, layout_.bytes());
    carve(base_, layout_, frontier_, counts_, sums_, parents_, levels_);
    words_ = static_cast<int>(p.per_rank() / 64);
    per_ = static_cast<int>(p.per_rank());
  }
  ~MpiHostExchange() override { std::free(base_); }

  void gather_frontier(int parity) override {
    check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, frontier_[parity], words_,
                            MPI_UINT64_T, comm_),
              "MPI_Allgather (frontier)");
  }

  Counts reduce_counts() override {
    check_mpi(MPI_Allreduce(counts_, sums_, kCountWords, MPI_INT64_T, MPI_SUM, comm_),
              "MPI_Allreduce (counts)");
    return Counts{sums_[0], sums_[1]};
  }

  void gather_tree() override {
    check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, parents_, per_, MPI_INT64_T, comm_),
              "MPI_Allgather (parents)");
    check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, levels_, per_, MPI_INT32_T, comm_),
              "MPI_Allgather (levels)");
  }

 private:
  MPI_Comm comm_ = MPI_COMM_WORLD;
  HostLayout layout_{};
  unsigned char* base_ = nullptr;
  int64_t* sums_ = nullptr;
  int words_ = 0, per_ = 0;
};
#endif

}  // namespace

CommKind parse_comm(const std::string& name) {
  if (name == "tca") return CommKind::kTca;
  if (name == "mpi") return CommKind::kMpi;
  if (name == "nccl") return CommKind::kNccl;
  throw Error("unknown --comm '" + name + "' (tca, mpi or nccl)");
}

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

std::unique_ptr<Exchange> make_host_exchange(CommKind kind, const ExchangeSetup& setup) {
  switch (kind) {
    case CommKind::kTca:
      return std::make_unique<TcaHostExchange>(setup);
    case CommKind::kMpi:
#ifdef TCA_HARNESS_MPI
      return std::make_unique<MpiHostExchange>(setup);
#else
      break;
#endif
    case CommKind::kNccl:
      throw Error("NCCL moves GPU memory only (CPU ranks)");
  }
  throw Error("--comm mpi: this build has no MPI");
}

#ifndef BFS_HAVE_CUDA
std::unique_ptr<Exchange> make_device_exchange(CommKind, const ExchangeSetup&, std::string&) {
  throw Error("GPU ranks need a build with CUDA");
}
#endif

std::unique_ptr<Exchange> make_exchange(CommKind kind, const ExchangeSetup& setup,
                                        std::string& unavailable) {
  std::unique_ptr<Exchange> exchange;
  unavailable.clear();
  if (kind == CommKind::kNccl && setup.memory == Memory::kHost) {
    unavailable = "NCCL moves GPU memory only (CPU ranks)";
    return nullptr;
  }
  if (kind == CommKind::kMpi) {
    unavailable = tca_apps::mpi_unavailable();  // the same on every rank
    if (!unavailable.empty()) return nullptr;
  }
  collectively([&] {
    exchange = setup.memory == Memory::kHost ? make_host_exchange(kind, setup)
                                             : make_device_exchange(kind, setup, unavailable);
  });
  return exchange;
}

}  // namespace bfs
