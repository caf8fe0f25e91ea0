// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// GPU collectives over teams (split by parity, reversed by key): every algorithm in every form
// (host-called, stream-ordered, graph replay, device-initiated), checked on the GPU against the
// result of a job of the team's size (contributions are made by team rank).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "coll_gpu_kernels.h"
#include "gpu_test_util.h"
#include "tca/tca_coll_cuda.h"

namespace {

using namespace tca_test;

class TeamGpuTest : public GpuTest {
 protected:
  std::vector<int> needed_peers() const override {
    std::vector<int> all(size_);
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
};

enum class Form { kHost, kStream, kGraph, kDevice };

// One iteration of `form` for round *round (device memory; the host bumps it between rounds).
void run_form(Form form, tcaColl coll, void* send, size_t count, tcaDataType type, int me,
              cudaStream_t stream, const uint64_t* round, cudaGraphExec_t* graph) {
  if (form == Form::kHost) {
    ASSERT_CUDA_OK(fill_contribution(send, type, count, me, round, stream));
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
    ASSERT_TCA_OK(tcaCollStart(coll));
    ASSERT_TCA_OK(tcaCollWait(coll));
  } else if (form == Form::kStream) {
    ASSERT_CUDA_OK(fill_contribution(send, type, count, me, round, stream));
    ASSERT_TCA_OK(tcaCollStartStream(coll, stream));
  } else if (form == Form::kGraph) {
    if (*graph == nullptr) {
      cudaGraph_t captured = nullptr;
      ASSERT_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      const cudaError_t filled = fill_contribution(send, type, count, me, round, stream);
      const tcaResult started = tcaCollStartStream(coll, stream);
      ASSERT_CUDA_OK(cudaStreamEndCapture(stream, &captured));
      ASSERT_CUDA_OK(filled);
      ASSERT_TCA_OK(started);
      const cudaError_t made = cudaGraphInstantiate(graph, captured, 0);
      cudaGraphDestroy(captured);
      ASSERT_CUDA_OK(made);
    }
    ASSERT_CUDA_OK(cudaGraphLaunch(*graph, stream));
  } else {
    tcaDeviceColl handle = nullptr;
    int blocks = 0, threads = 0;
    ASSERT_TCA_OK(tcaCollDeviceHandle(coll, &handle, &blocks, &threads));
    ASSERT_CUDA_OK(fill_contribution(send, type, count, me, round, stream));
    DeviceCounters error(1);
    ASSERT_CUDA_OK(
        run_device_collective(handle, blocks, std::max(threads, 256), 1, error.at(0), stream));
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
    ASSERT_EQ(read_counter(error.at(0)), 0u) << "tcaDeviceCollRun's result";
  }
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
}

TEST_F(TeamGpuTest, EveryAlgorithmAndFormOverParityTeams) {
  tcaTeam team = TCA_TEAM_INVALID;
  ASSERT_TCA_OK(tcaTeamSplit(TCA_TEAM_WORLD, rank_ % 2, -rank_, &team));
  int me = 0, n = 0;
  ASSERT_TCA_OK(tcaTeamRank(team, &me));
  ASSERT_TCA_OK(tcaTeamSize(team, &n));
  constexpr size_t kCount = 4099;
  KindRegion send(kCount * sizeof(double), TCA_MEM_GPU);
  KindRegion recv(kCount * sizeof(double) * n, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  Stream stream;
  DeviceCounters counters(2);  // the round, then the mismatches
  for (int a = TCA_COLL_RING; a < TCA_COLL_ALGORITHMS; ++a) {
    for (tcaCollKind kind : {TCA_COLL_ALLREDUCE, TCA_COLL_ALLGATHER}) {
      SCOPED_TRACE(::testing::Message()
                   << tcaCollAlgorithmName(static_cast<tcaCollAlgorithm>(a))
                   << (kind == TCA_COLL_ALLREDUCE ? " allreduce" : " allgather"));
      tcaCollConfig config{};
      config.algorithm = static_cast<tcaCollAlgorithm>(a);
      config.memory = TCA_MEM_GPU;
      config.team = team;
      tcaColl coll = nullptr;
      ASSERT_TCA_OK(
          tcaCollNew(&coll, kind, TCA_DOUBLE, TCA_SUM, kCount, send.data(), recv.data(), &config));
      cudaGraphExec_t graph = nullptr;
      uint64_t round = 0;
      for (Form form : {Form::kHost, Form::kStream, Form::kGraph, Form::kDevice, Form::kGraph}) {
        ASSERT_CUDA_OK(cudaMemcpy(counters.at(0), &round, sizeof(round), cudaMemcpyHostToDevice));
        ASSERT_NO_FATAL_FAILURE(run_form(form, coll, send.data(), kCount, TCA_DOUBLE, me,
                                         stream.get(), counters.at(0), &graph));
        ASSERT_CUDA_OK(count_result_mismatches(
            recv.data(), kind, TCA_DOUBLE, TCA_SUM, kCount, n, counters.at(0),
            reinterpret_cast<unsigned long long*>(counters.at(1)), stream.get()));
        ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
        ASSERT_EQ(read_counter(counters.at(1)), 0u) << "form " << static_cast<int>(form);
        ++round;
      }
      if (graph != nullptr) cudaGraphExecDestroy(graph);
      ASSERT_TCA_OK(tcaCollFree(coll));
    }
  }
  ASSERT_TCA_OK(tcaTeamFree(team));
}

}  // namespace
