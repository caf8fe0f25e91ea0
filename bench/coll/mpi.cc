// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-coll's MPI reference, ref.mpi: MPI_Allreduce / MPI_Allgather on the same buffers (GPU
// memory: a CUDA-aware MPI, or staged through pinned host memory). Built in where tca has MPI
// (TCA_BENCH_MPI); it runs where an MPI launcher started the job, and is skipped with the
// reason elsewhere.
#ifdef TCA_BENCH_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_Query_cuda_support
#endif
#endif
#ifdef TCA_HARNESS_CUDA
#include <cuda_runtime_api.h>

#include "tca_harness/cuda_check.h"
#endif

#include "coll.h"
#include "tca_harness/check.h"
#include "tca_harness/ranks.h"

namespace tca_coll_bench {
namespace {

using tca_harness::check;

#ifdef TCA_BENCH_MPI
MPI_Comm g_comm = MPI_COMM_NULL;  // ref.mpi's own communicator, where MPI runs

MPI_Datatype mpi_type(tcaDataType type) {
  switch (type) {
    case TCA_INT32:
      return MPI_INT32_T;
    case TCA_INT64:
      return MPI_INT64_T;
    case TCA_FLOAT:
      return MPI_FLOAT;
    case TCA_DOUBLE:
      return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(tcaRedOp op) {
  switch (op) {
    case TCA_SUM:
      return MPI_SUM;
    case TCA_MAX:
      return MPI_MAX;
    case TCA_MIN:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

// MPI on the buffers themselves (GPU memory: a CUDA-aware MPI).
class MpiCollective final : public Implementation {
 public:
  MpiCollective(const Shape& shape, const Buffers& buffers, MPI_Comm comm)
      : shape_(shape), buffers_(buffers), comm_(comm) {}
  void run(int calls) override {
    const int count = static_cast<int>(shape_.count);
    for (int i = 0; i < calls; ++i) {
      if (shape_.kind == TCA_COLL_ALLREDUCE)
        MPI_Allreduce(buffers_.send, buffers_.recv, count, mpi_type(shape_.type), mpi_op(shape_.op),
                      comm_);
      else
        MPI_Allgather(buffers_.send, count, mpi_type(shape_.type), buffers_.recv, count,
                      mpi_type(shape_.type), comm_);
    }
  }
  void describe(Row* row) const override {
    if (buffers_.memory == TCA_MEM_GPU) row->staged = false;
  }

 private:
  Shape shape_;
  Buffers buffers_;
  MPI_Comm comm_;
};
#ifdef TCA_HARNESS_CUDA
// MPI that cannot read GPU memory: every call copies the contribution to pinned host memory
// and the result back, inside the timed call (that is what such an MPI costs an application).
class StagedMpiCollective final : public Implementation {
 public:
  StagedMpiCollective(const Shape& shape, const Buffers& buffers, MPI_Comm comm)
      : shape_(shape), gpu_(buffers) {
    check(cudaMallocHost(&host_.send, shape.send_bytes()), "cudaMallocHost");
    check(cudaMallocHost(&host_.recv, shape.result_bytes()), "cudaMallocHost");
    mpi_ = std::make_unique<MpiCollective>(shape, host_, comm);
  }
  ~StagedMpiCollective() override {
    cudaFreeHost(host_.send);
    cudaFreeHost(host_.recv);
  }
  void run(int calls) override {
    for (int i = 0; i < calls; ++i) {
      check(cudaMemcpy(host_.send, gpu_.send, shape_.send_bytes(), cudaMemcpyDeviceToHost),
            "cudaMemcpy");
      mpi_->run(1);
      check(cudaMemcpy(gpu_.recv, host_.recv, shape_.result_bytes(), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    }
  }
  void describe(Row* row) const override { row->staged = true; }

 private:
  Shape shape_;
  Buffers gpu_;
  Buffers host_;
  std::unique_ptr<MpiCollective> mpi_;
};
#endif  // TCA_HARNESS_CUDA

bool mpi_cuda_aware() {
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

#endif  // TCA_BENCH_MPI

}  // namespace

void open_mpi(const std::string& missing, Context* context) {
  context->mpi_missing = missing;
#ifdef TCA_BENCH_MPI
  if (missing.empty()) MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
#endif
}

void close_mpi() {
#ifdef TCA_BENCH_MPI
  if (g_comm != MPI_COMM_NULL) MPI_Comm_free(&g_comm);
#endif
}

bool mpi_needs_staging() {
#ifdef TCA_BENCH_MPI
  return !tca_harness::all_ranks(mpi_cuda_aware());
#else
  return false;
#endif
}

std::unique_ptr<Implementation> open_mpi_collective(const Shape& shape, const Buffers& buffers,
                                                    const Context& context) {
#ifdef TCA_BENCH_MPI
#ifdef TCA_HARNESS_CUDA
  if (context.mpi_staged) return std::make_unique<StagedMpiCollective>(shape, buffers, g_comm);
#endif
  (void)context;
  return std::make_unique<MpiCollective>(shape, buffers, g_comm);
#else
  (void)shape, (void)buffers, (void)context;
  tca_harness::die("ref.mpi needs MPI");  // unreachable: skip_reason says why it is skipped
#endif
}

}  // namespace tca_coll_bench
