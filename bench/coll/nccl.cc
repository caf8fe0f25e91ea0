// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-coll's NCCL reference, ref.nccl*: NCCL's allreduce and allgather in the stream forms.
// Built where the harness has NCCL's header (TCA_HARNESS_NCCL); the library is loaded at run
// time.
#include "tca_harness/nccl.h"

#include <cstdlib>

#include "stream.h"
#include "tca_harness/options.h"

namespace tca_coll_bench {
namespace {

std::unique_ptr<tca_harness::Nccl> g_nccl;  // one communicator over all ranks serves every row

// NCCL, loaded at run time (libnccl.so.2 may be absent, or refuse the job's GPUs; then its rows
// are skipped with a note). One communicator over all ranks serves every row.
ncclDataType_t nccl_type(tcaDataType type) {
  switch (type) {
    case TCA_INT32:
      return ncclInt32;
    case TCA_INT64:
      return ncclInt64;
    case TCA_FLOAT:
      return ncclFloat32;
    case TCA_DOUBLE:
      return ncclFloat64;
  }
  return ncclFloat64;
}

ncclRedOp_t nccl_op(tcaRedOp op) {
  switch (op) {
    case TCA_SUM:
      return ncclSum;
    case TCA_MAX:
      return ncclMax;
    case TCA_MIN:
      return ncclMin;
  }
  return ncclSum;
}

class NcclStreamOp final : public StreamOp {
 public:
  NcclStreamOp(const tca_harness::Nccl& nccl, const Shape& shape, const Buffers& buffers)
      : nccl_(nccl), shape_(shape), buffers_(buffers) {}
  void enqueue(cudaStream_t stream) override {
    if (shape_.kind == TCA_COLL_ALLREDUCE)
      nccl_.check(nccl_.all_reduce(buffers_.send, buffers_.recv, shape_.count,
                                   nccl_type(shape_.type), nccl_op(shape_.op), stream),
                  "ncclAllReduce");
    else
      nccl_.check(nccl_.all_gather(buffers_.send, buffers_.recv, shape_.count,
                                   nccl_type(shape_.type), stream),
                  "ncclAllGather");
  }

 private:
  const tca_harness::Nccl& nccl_;
  Shape shape_;
  Buffers buffers_;
};
}  // namespace

std::unique_ptr<Implementation> open_nccl(const Shape& shape, const Buffers& buffers, Form form) {
  return std::make_unique<StreamCollective>(std::make_unique<NcclStreamOp>(*g_nccl, shape, buffers),
                                            issue_of(form));
}

void open_nccl_library(const tca_harness::Table& table, Context* context) {
  // NCCL that is missing or refuses the job (two ranks on one GPU) only skips its rows.
  g_nccl = std::make_unique<tca_harness::Nccl>();
  context->nccl_missing = g_nccl->open();
  if (!context->nccl_missing.empty()) {
    g_nccl.reset();
    return;
  }
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  table.comment(tca_harness::format(
      "ref.nccl: NCCL %s, N calls back to back then one synchronization; "
      "ref.nccl_graph: N calls in one CUDA graph; ref.nccl_sync: a synchronization per "
      "call; NCCL_NVLS_ENABLE=%s",
      g_nccl->version().c_str(), nvls != nullptr ? nvls : "(unset)"));
}

void close_nccl_library() { g_nccl.reset(); }
}  // namespace tca_coll_bench
