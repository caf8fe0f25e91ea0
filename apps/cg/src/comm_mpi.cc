// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Communication over MPI collectives; GPU data goes through host staging buffers.
#include <mpi.h>

#include <stdexcept>
#include <string>

#include "comm.h"

namespace tca_cg {
namespace {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + ": " + std::string(text, length));
}

class MpiComm final : public Comm {
 public:
  explicit MpiComm(const Layout& layout) : layout_(layout) {
    if (layout.partition == Partition::kTwoD) {
      // Grid rows: ranks (i, 0..s-1) ordered by column; grid columns: (0..s-1, j) by row.
      check_mpi(MPI_Comm_split(MPI_COMM_WORLD, layout.grid_row, layout.grid_col, &row_comm_),
                "MPI_Comm_split");
      check_mpi(MPI_Comm_split(MPI_COMM_WORLD, layout.grid_col, layout.grid_row, &col_comm_),
                "MPI_Comm_split");
    }
  }
  ~MpiComm() override {
    if (row_comm_ != MPI_COMM_NULL) MPI_Comm_free(&row_comm_);
    if (col_comm_ != MPI_COMM_NULL) MPI_Comm_free(&col_comm_);
  }

  CommKind kind() const override { return CommKind::kMpi; }
  Allocator allocator(Device device) override {
    return device == Device::kCpu ? host_allocator() : gpu_allocator();
  }
  int scratch_pieces(const Layout&) const override { return 0; }
  bool stream_ordered() const override { return false; }

  void bind(Engine& engine) override {
    engine_ = &engine;
    buffers_ = engine.buffers();
    gpu_ = engine.device() == Device::kGpu;
    const int64_t m = layout_.piece;
    if (gpu_) {
      // Host twins of what MPI touches.
      stage_.p_full = engine.host_staging(layout_.block.cols_padded);
      stage_.p = layout_.partition == Partition::kOneD ? stage_.p_full + layout_.rank * m
                                                       : engine.host_staging(m);
      stage_.w = engine.host_staging(layout_.block.rows_padded);
      stage_.q = engine.host_staging(m);
      stage_.scalars = engine.host_staging(kScalarCount);
    } else {
      stage_ = buffers_;
    }
  }

  void gather_p() override {
    const int64_t m = layout_.piece;
    const int count = static_cast<int>(m);
    if (gpu_) engine_->download(stage_.p, buffers_.p, m);
    if (layout_.partition == Partition::kOneD) {
      check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DOUBLE, stage_.p_full, count, MPI_DOUBLE,
                              MPI_COMM_WORLD),
                "MPI_Allgather");
    } else {
      // Rank (i, j) swaps pieces with rank (j, i): piece (j, i) belongs at offset i*m of
      // column block j. The grid column then gathers the block's other pieces.
      const int partner = layout_.rank_at(layout_.grid_col, layout_.grid_row);
      double* slot = stage_.p_full + layout_.grid_row * m;
      check_mpi(MPI_Sendrecv(stage_.p, count, MPI_DOUBLE, partner, 0, slot, count, MPI_DOUBLE,
                             partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
      check_mpi(
          MPI_Allgather(MPI_IN_PLACE, 0, MPI_DOUBLE, stage_.p_full, count, MPI_DOUBLE, col_comm_),
          "MPI_Allgather");
    }
    if (gpu_) engine_->upload(buffers_.p_full, stage_.p_full, layout_.block.cols_padded);
  }

  bool reduce_w(bool /*fuse_dot*/) override {
    if (layout_.partition == Partition::kOneD) return false;
    const int64_t m = layout_.piece;
    if (gpu_) engine_->download(stage_.w, buffers_.w, layout_.block.rows_padded);
    check_mpi(MPI_Reduce_scatter_block(stage_.w, stage_.q, static_cast<int>(m), MPI_DOUBLE, MPI_SUM,
                                       row_comm_),
              "MPI_Reduce_scatter_block");
    if (gpu_) engine_->upload(buffers_.q, stage_.q, m);
    return false;
  }

  void allreduce(Scalar local, int count) override {
    double* send = stage_.scalars + local;
    double* recv = stage_.scalars + local + kGlobalOffset;
    if (gpu_) engine_->download(send, buffers_.scalars + local, count);
    check_mpi(MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce");
    if (gpu_) engine_->upload(buffers_.scalars + local + kGlobalOffset, recv, count);
  }

 private:
  Layout layout_;
  MPI_Comm row_comm_ = MPI_COMM_NULL;
  MPI_Comm col_comm_ = MPI_COMM_NULL;
  Engine* engine_ = nullptr;
  Buffers buffers_;
  Buffers stage_;
  bool gpu_ = false;
};

}  // namespace

std::unique_ptr<Comm> make_mpi_comm(const Layout& layout) {
  return std::make_unique<MpiComm>(layout);
}

}  // namespace tca_cg
