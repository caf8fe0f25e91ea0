// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-coll's GPU tca collectives (CUDA builds): tcaCollStartStream back to back or captured in
// a CUDA graph; the stream forms themselves (StreamCollective, stream.h); the GPU run's setup.
#include <cuda_runtime_api.h>
#include <tca/tca_coll_cuda.h>
#include <tca/tca_cuda.h>

#include <algorithm>
#include <cstdio>

#include "stream.h"
#include "tca_harness/check.h"
#include "tca_harness/cuda_check.h"
#include "tca_harness/options.h"
#include "tca_harness/ranks.h"

namespace tca_coll_bench {

using tca_harness::check;

void describe_program(tcaColl coll, Row* row) {
  int ll = 0;
  check(tcaCollGetProtocol(coll, &ll, &row->channels), "tcaCollGetProtocol");
  row->protocol = ll ? "ll" : "simple";
}

namespace {

class TcaStreamOp final : public StreamOp {
 public:
  TcaStreamOp(const Shape& shape, const Buffers& buffers, tcaCollAlgorithm algorithm)
      : coll_(new_collective(shape, buffers, algorithm)) {}
  void enqueue(cudaStream_t stream) override {
    check(tcaCollStartStream(coll_.get(), stream), "tcaCollStartStream");
  }
  void describe(Row* row) const override { describe_program(coll_.get(), row); }

 private:
  CollPtr coll_;
};

}  // namespace

StreamCollective::Issue issue_of(Form form) {
  using Issue = StreamCollective::Issue;
  return form == Form::kGraph    ? Issue::kGraph
         : form == Form::kSynced ? Issue::kSynced
                                 : Issue::kEager;
}

std::unique_ptr<Implementation> open_tca_stream(const Shape& shape, const Buffers& buffers,
                                                tcaCollAlgorithm algorithm, Form form) {
  return std::make_unique<StreamCollective>(
      std::make_unique<TcaStreamOp>(shape, buffers, algorithm), issue_of(form));
}

bool open_gpu(const tca_harness::Table& table, bool wants_nccl, Context* context) {
  int device = -1;
  const tcaResult has_gpu = tcaCudaDevice(&device);
  if (has_gpu != TCA_SUCCESS)
    std::fprintf(stderr, "tca-coll: rank %d: --memory gpu: %s\n", g_rank,
                 tca_harness::describe_failure(has_gpu, "tcaCudaDevice").c_str());
  if (!tca_harness::all_ranks(has_gpu == TCA_SUCCESS)) return false;

  if (context->mpi_missing.empty()) context->mpi_staged = mpi_needs_staging();
  table.comment(tca_harness::format(
      "memory gpu: tca.<alg>: tcaCollStart + tcaCollWait per call; _stream: N "
      "tcaCollStartStream back to back on one stream, one cudaStreamSynchronize; _graph: "
      "N iterations in one CUDA graph, replayed; time / N; tca.auto_resident: host-called, "
      "served by a resident kernel (resident_idle_us %u) where the object runs in one "
      "block",
      kBenchResidentIdleUs));
  if (context->mpi_missing.empty())
    table.comment(std::string("ref.mpi: ") +
                  (context->mpi_staged ? "staged: MPI is not CUDA-aware, each call copies through "
                                         "pinned host buffers (timed)"
                                       : "on the GPU buffers (CUDA-aware MPI)"));
  if (wants_nccl) open_nccl_library(table, context);
  return true;
}
}  // namespace tca_coll_bench
