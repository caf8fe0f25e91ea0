// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "topo_device_program.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "block_store.h"
#include "tca/tca.h"
#include "tca/tca_coll.h"
#include "tca/tca_coll_cuda.h"
#include "tca/tca_cuda.h"
#include "tca_harness/check.h"

namespace tca_tools {
namespace {

constexpr int kIterations = 2000;
constexpr int kWarmup = 200;
constexpr size_t kStoreBytes = size_t{64} << 20;
constexpr int kStoreRepeats = 5;

void check(tcaResult result, const char* call) {
  if (result != TCA_SUCCESS)
    tca_harness::die(fmt::format("{} failed: {}: {}", call, tcaGetErrorString(result),
                                 tcaGetLastErrorMessage()));
}
void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess)
    tca_harness::die(fmt::format("{} failed: {}", call, cudaGetErrorString(error)));
}
#define CHECK(call) check((call), #call)

// The slowest rank's value (every rank calls).
double slowest(double value) {
  int size = 0;
  CHECK(tcaSize(&size));
  std::vector<double> all(static_cast<size_t>(size));
  CHECK(tcaBootstrapAllgather(&value, all.data(), sizeof(double)));
  return *std::max_element(all.begin(), all.end());
}

double seconds_since(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

// A collective of one double per rank in GPU memory (an allreduce, or an allgather of one
// double from each rank) by `algorithm`, one object per form.
class OneDouble {
 public:
  OneDouble(tcaCollKind kind, tcaCollAlgorithm algorithm, int ranks, unsigned resident_idle_us) {
    const size_t bytes = 64 * static_cast<size_t>(ranks);
    CHECK(tcaMalloc(&send_, bytes, TCA_MEM_GPU));
    CHECK(tcaMalloc(&recv_, bytes, TCA_MEM_GPU));
    CHECK(cudaMemset(send_, 0, bytes));
    tcaCollConfig config{};
    config.algorithm = algorithm;
    config.memory = TCA_MEM_GPU;
    config.resident_idle_us = resident_idle_us;
    CHECK(tcaCollNew(&coll_, kind, TCA_DOUBLE, TCA_SUM, 1, send_, recv_, &config));
  }
  ~OneDouble() {
    tcaCollFree(coll_);
    CHECK(cudaDeviceSynchronize());  // a resident kernel leaves after its idle time
    tcaFree(send_);
    tcaFree(recv_);
  }
  OneDouble(const OneDouble&) = delete;
  OneDouble& operator=(const OneDouble&) = delete;

  // Microseconds per host-called iteration (tcaCollStart + tcaCollWait), back to back.
  double host_called() {
    for (int i = 0; i < kWarmup; ++i) run_once();
    CHECK(tcaBarrier());
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < kIterations; ++i) run_once();
    return slowest(seconds_since(begin) * 1e6 / kIterations);
  }

  // Microseconds per iteration of kIterations captured in one CUDA graph and replayed.
  double graph() {
    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kIterations; ++i) CHECK(tcaCollStartStream(coll_, stream));
    CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, stream));  // warm-up
    CHECK(cudaStreamSynchronize(stream));
    CHECK(tcaBarrier());
    const auto begin = std::chrono::steady_clock::now();
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    const double us = slowest(seconds_since(begin) * 1e6 / kIterations);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(stream));
    return us;
  }

  std::string protocol() const {
    int ll = 0;
    int channels = 0;
    CHECK(tcaCollGetProtocol(coll_, &ll, &channels));
    return fmt::format("{} x{}", ll != 0 ? "ll" : "simple", channels);
  }

 private:
  void run_once() {
    CHECK(tcaCollStart(coll_));
    CHECK(tcaCollWait(coll_));
  }

  void* send_ = nullptr;
  void* recv_ = nullptr;
  tcaColl coll_ = nullptr;
};

// Every algorithm with a step count of its own at any rank count (docs/COLLECTIVES.md), both
// collectives: the graph forms' differences give the programs' costs per step and per
// algorithm (sim/topo_to_fabric.py).
void collective_rounds(int rank, int size, std::FILE* text,
                       const std::function<void(nlohmann::ordered_json)>& add_row) {
  const tcaCollKind kinds[] = {TCA_COLL_ALLREDUCE, TCA_COLL_ALLGATHER};
  const tcaCollAlgorithm algorithms[] = {TCA_COLL_RECURSIVE_DOUBLING, TCA_COLL_RING,
                                         TCA_COLL_DISSEMINATION};
  if (rank == 0)
    fmt::print(text,
               "\nHost-called GPU collectives of one double per rank, us per call (slowest rank's "
               "mean of {}); call = host-called less the graph form\n"
               "  {:>10} {:>20} {:>10} {:>10} {:>10} {:>10} {:>13} {:>13}\n",
               kIterations, "collective", "algorithm", "protocol", "resident", "launch", "graph",
               "resident call", "launch call");
  for (const tcaCollKind kind : kinds) {
    const char* op = kind == TCA_COLL_ALLREDUCE ? "allreduce" : "allgather";
    for (const tcaCollAlgorithm algorithm : algorithms) {
      double us[3] = {0, 0, 0};  // resident, launch, graph
      std::string protocol;
      {
        OneDouble resident(kind, algorithm, size, 0);  // TCA_COLL_RESIDENT_US's idle time
        us[0] = resident.host_called();
        protocol = resident.protocol();
      }
      {
        OneDouble launched(kind, algorithm, size, TCA_COLL_RESIDENT_OFF);
        us[1] = launched.host_called();
        us[2] = launched.graph();
      }
      if (rank != 0) continue;
      const char* name = tcaCollAlgorithmName(algorithm);
      fmt::print(text, "  {:>10} {:>20} {:>10} {:10.2f} {:10.2f} {:10.2f} {:13.2f} {:13.2f}\n", op,
                 name, protocol, us[0], us[1], us[2], us[0] - us[2], us[1] - us[2]);
      const char* forms[] = {"resident", "launch", "graph"};
      for (int f = 0; f < 3; ++f)
        add_row({{"table", "gpu_collective"},
                 {"op", op},
                 {"bytes", kind == TCA_COLL_ALLREDUCE ? 8 : 8 * size},
                 {"algorithm", name},
                 {"ranks", size},
                 {"protocol", protocol},
                 {"form", forms[f]},
                 {"us", us[f]}});
    }
  }
}

// Rank 0's blocks storing into rank 1's GPU (every other rank waits).
void block_store_rates(int rank, std::FILE* text,
                       const std::function<void(nlohmann::ordered_json)>& add_row) {
  void* src = nullptr;
  void* dst = nullptr;
  CHECK(tcaMalloc(&src, kStoreBytes, TCA_MEM_GPU));
  CHECK(tcaMalloc(&dst, kStoreBytes, TCA_MEM_GPU));
  CHECK(cudaMemset(src, 0x5a, kStoreBytes));
  tcaHandle mine{};
  CHECK(tcaCreateHandle(&mine, dst, kStoreBytes, TCA_MEM_GPU));
  int size = 0;
  CHECK(tcaSize(&size));
  std::vector<tcaHandle> handles(static_cast<size_t>(size));
  CHECK(tcaAllgatherHandles(&mine, handles.data()));
  if (rank == 0) {
    void* remote = nullptr;
    CHECK(tcaDevicePointer(&remote, &handles[1], 0, kStoreBytes));
    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    fmt::print(text,
               "\nBlocks of a kernel storing into rank 1's GPU (16-byte stores, {} MiB), GB/s: "
               "a GPU collective's channel is one block\n  {:>7} {:>8} {:>10} {:>10}\n",
               kStoreBytes >> 20, "blocks", "threads", "GB/s", "per block");
    for (const int blocks : {1, 2, 4, 8}) {
      for (const unsigned threads : {128u, 512u}) {
        CHECK(launch_block_store(remote, src, kStoreBytes, blocks, threads, stream));  // warm-up
        CHECK(cudaStreamSynchronize(stream));
        const auto begin = std::chrono::steady_clock::now();
        for (int i = 0; i < kStoreRepeats; ++i)
          CHECK(launch_block_store(remote, src, kStoreBytes, blocks, threads, stream));
        CHECK(cudaStreamSynchronize(stream));
        const double gbps = kStoreBytes * kStoreRepeats / seconds_since(begin) * 1e-9;
        fmt::print(text, "  {:>7} {:>8} {:10.1f} {:10.1f}\n", blocks, threads, gbps, gbps / blocks);
        add_row({{"table", "block_store"},
                 {"from", 0},
                 {"to", 1},
                 {"blocks", blocks},
                 {"threads", threads},
                 {"bytes", kStoreBytes},
                 {"GBps", gbps}});
      }
    }
    CHECK(cudaStreamDestroy(stream));
  }
  CHECK(tcaBarrier());
  CHECK(tcaFree(src));
  CHECK(tcaFree(dst));
}

}  // namespace

void measure_device_programs(int rank, int size, std::FILE* text,
                             const std::function<void(nlohmann::ordered_json)>& add_row) {
  if (size < 2) return;
  collective_rounds(rank, size, text, add_row);
  block_store_rates(rank, text, add_row);
}

}  // namespace tca_tools
