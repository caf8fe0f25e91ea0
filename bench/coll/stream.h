// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Collectives issued in stream order (CUDA builds): a StreamOp enqueues one iteration, and
// StreamCollective issues `calls` of them eagerly, as one CUDA graph, or synchronized each.
// Used by the GPU tca rows (tca_gpu.cc) and NCCL's (nccl.cc).
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>

#include "coll.h"
#include "tca_harness/check.h"
#include "tca_harness/cuda_check.h"

namespace tca_coll_bench {

// One iteration of a collective, enqueued on a stream.
class StreamOp {
 public:
  virtual ~StreamOp() = default;
  virtual void enqueue(cudaStream_t stream) = 0;
  virtual void describe(Row* /*row*/) const {}
};

// Iterations in stream order: `calls` enqueued back to back (eager), or one CUDA graph of
// `calls` captured iterations replayed (graph); then one synchronization. Or a synchronization
// after each call (synced: what a host-called collective does).
class StreamCollective final : public Implementation {
 public:
  enum class Issue { kEager, kGraph, kSynced };
  StreamCollective(std::unique_ptr<StreamOp> op, Issue issue)
      : op_(std::move(op)), graph_(issue == Issue::kGraph), synced_(issue == Issue::kSynced) {}
  ~StreamCollective() override {
    for (const auto& [calls, exec] : graphs_) cudaGraphExecDestroy(exec);  // before op_ goes
  }
  void prepare(int calls) override {
    if (graph_) graph_of(calls);
  }
  void run(int calls) override {
    if (graph_)
      tca_harness::check(cudaGraphLaunch(graph_of(calls), tca_harness::bench_stream()),
                         "cudaGraphLaunch");
    else
      for (int i = 0; i < calls; ++i) {
        op_->enqueue(tca_harness::bench_stream());
        if (synced_)
          tca_harness::check(cudaStreamSynchronize(tca_harness::bench_stream()),
                             "cudaStreamSynchronize");
      }
    tca_harness::check(cudaStreamSynchronize(tca_harness::bench_stream()), "cudaStreamSynchronize");
  }
  void describe(Row* row) const override { op_->describe(row); }

 private:
  cudaGraphExec_t graph_of(int calls) {
    if (const auto found = graphs_.find(calls); found != graphs_.end()) return found->second;
    cudaGraph_t graph = nullptr;
    // Thread-local: a library thread's CUDA calls must not break this capture.
    tca_harness::check(
        cudaStreamBeginCapture(tca_harness::bench_stream(), cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
    for (int i = 0; i < calls; ++i) op_->enqueue(tca_harness::bench_stream());
    tca_harness::check(cudaStreamEndCapture(tca_harness::bench_stream(), &graph),
                       "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    tca_harness::check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    tca_harness::check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    tca_harness::check(cudaGraphUpload(exec, tca_harness::bench_stream()),
                       "cudaGraphUpload");  // not in the first replay
    graphs_[calls] = exec;
    return exec;
  }

  std::unique_ptr<StreamOp> op_;
  bool graph_;
  bool synced_;
  std::map<int, cudaGraphExec_t> graphs_;  // by iterations
};

// The issue of a stream form.
StreamCollective::Issue issue_of(Form form);

}  // namespace tca_coll_bench
