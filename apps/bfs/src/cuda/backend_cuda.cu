// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU backend: the rank's tuples, graph, searches and validation in GPU memory.
#include <tca/tca_cuda.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "agree.h"
#include "backend.h"
#include "control.h"
#include "cuda/cuda_util.h"
#include "cuda/device_graph.h"
#include "cuda/engine_cuda.h"
#include "cuda/validate_cuda.h"
#include "graph.h"

namespace bfs {
namespace {

constexpr int kThreads = 256;

__global__ void generate_kernel(KroneckerGenerator generator, uint64_t first, uint64_t count,
                                Edge* edges) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    edges[i] = generator.edge(first + i);
}

// The engine's settings from the environment: TCA_BFS_LANES (lanes per vertex in bottom-up
// steps: 1, 2, 4, 8, 16 or 32), TCA_BFS_GRAPHS (0: levels launched call by call) and
// TCA_BFS_AHEAD (pipelined levels launched ahead of the host: 1 or 2; 0: the host chooses each
// level's direction after a round trip), TCA_BFS_EARLY (1, the default: the levels' kernels
// launched while the one before them runs, on compute capability 9.0 and up; 0: in turn) and
// TCA_BFS_PUSH (1, the default: pipelined levels store the frontier into every rank's copy where
// the exchange maps the peers' memory; 0: they gather it).
EngineTuning engine_tuning() {
  EngineTuning tuning;
  if (const char* text = std::getenv("TCA_BFS_LANES")) {
    const std::string value(text);
    if (value != "1" && value != "2" && value != "4" && value != "8" && value != "16" &&
        value != "32")
      throw Error("TCA_BFS_LANES=" + value + ": lanes per vertex must be 1, 2, 4, 8, 16 or 32");
    tuning.lanes = std::stoi(value);
  }
  if (const char* text = std::getenv("TCA_BFS_GRAPHS")) {
    const std::string value(text);
    if (value != "0" && value != "1") throw Error("TCA_BFS_GRAPHS=" + value + ": 0 or 1");
    tuning.graphs = value == "1";
  }
  if (const char* text = std::getenv("TCA_BFS_AHEAD")) {
    const std::string value(text);
    if (value != "0" && value != "1" && value != "2")
      throw Error("TCA_BFS_AHEAD=" + value + ": 0, 1 or 2 levels ahead");
    tuning.ahead = std::stoi(value);
  }
  if (const char* text = std::getenv("TCA_BFS_EARLY")) {
    const std::string value(text);
    if (value != "0" && value != "1") throw Error("TCA_BFS_EARLY=" + value + ": 0 or 1");
    tuning.early = value == "1";
  }
  if (const char* text = std::getenv("TCA_BFS_PUSH")) {
    const std::string value(text);
    if (value != "0" && value != "1") throw Error("TCA_BFS_PUSH=" + value + ": 0 or 1");
    tuning.push = value == "1";
  }
  return tuning;
}

class DeviceBackend final : public Backend {
 public:
  DeviceBackend(ThreadPool& pool, int rank) : pool_(pool), rank_(rank), tuning_(engine_tuning()) {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp properties;
    check_cuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
    name_ = properties.name;
    tuning_.early = tuning_.early && properties.major >= 9;
  }
  ~DeviceBackend() override {
    validator_.reset();
    cudaStreamDestroy(stream_);
  }

  Memory memory() const override { return Memory::kDevice; }
  void* stream() override { return stream_; }
  std::string describe() const override {
    std::string levels = "call by call";
    if (tuning_.graphs)
      levels = tuning_.ahead > 0
                   ? "as CUDA graphs with tca and nccl, directions chosen on the GPU, " +
                         std::to_string(tuning_.ahead) + " level(s) launched ahead"
                   : "as CUDA graphs with tca and nccl, directions chosen by the host";
    return "gpu (" + name_ + "), " + std::to_string(tuning_.lanes) +
           " lane(s) per bottom-up vertex, levels " + levels +
           (tuning_.early ? ", kernels launched early" : "");
  }

  void generate(const KroneckerGenerator& generator, const EdgeListInfo& info) override {
    info_ = info;
    edges_.resize(info.share.size());
    if (info.share.size() > 0)
      generate_kernel<<<grid_for(info.share.size(), kThreads), kThreads, 0, stream_>>>(
          generator, info.share.first, info.share.size(), edges_.data());
    check_cuda(cudaGetLastError(), "generate_kernel");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void take(std::vector<Edge> edges, const EdgeListInfo& info) override {
    info_ = info;
    edges_.resize(edges.size());
    copy_sync(edges_.data(), edges.data(), edges.size() * sizeof(Edge), cudaMemcpyHostToDevice,
              stream_);
  }
  std::vector<Edge> host_edges() override {
    std::vector<Edge> edges(edges_.size());
    copy_sync(edges.data(), edges_.data(), edges_.bytes(), cudaMemcpyDeviceToHost, stream_);
    return edges;
  }

  void build(const Partition& partition) override;
  uint64_t total_arcs() const override { return graph_.total_arcs; }
  LocalDegrees degrees() override;

  std::unique_ptr<Engine> make_engine(Exchange& exchange) override {
    return std::make_unique<CudaEngine>(graph_, exchange, stream_, tuning_);
  }
  Validation validate(Exchange& exchange, vertex_t root) override {
    if (!validator_)
      validator_ = std::make_unique<DeviceValidator>(graph_.partition, rank_, stream_);
    return validator_->validate(edges_.data(), edges_.size(), info_.share.first, root,
                                exchange.parents(), exchange.levels());
  }
  std::vector<int64_t> local_parents(Exchange& exchange) override {
    std::vector<int64_t> parents(graph_.local_vertices);
    copy_sync(parents.data(), exchange.parents() + rank_ * graph_.partition.per_rank(),
              parents.size() * sizeof(int64_t), cudaMemcpyDeviceToHost, stream_);
    return parents;
  }

 private:
  ThreadPool& pool_;
  int rank_;
  EngineTuning tuning_;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  EdgeListInfo info_;
  DeviceArray<Edge> edges_;
  DeviceGraph graph_;
  std::unique_ptr<DeviceValidator> validator_;
};

void DeviceBackend::build(const Partition& partition) {
  graph_.partition = partition;
  graph_.rank = rank_;
  graph_.local_vertices = partition.count(rank_);
  DeviceArray<uint64_t> arcs;
  uint64_t count = 0;
  collectively([&] {
    if (partition.ranks() == 1) {
      count = 2 * edges_.size();
      arcs.resize(count);
      make_arcs(edges_.data(), edges_.size(), arcs.data(), stream_);
      return;
    }
    // Several ranks: the arcs go to their owners through the host, as on CPU ranks.
    const std::vector<Edge> edges = host_edges();
    std::vector<uint64_t> per_rank;
    std::vector<uint64_t> bucketed =
        bucket_arcs(edges.data(), edges.size(), partition, pool_, per_rank);
    const std::vector<uint64_t> received = exchange_arcs(std::move(bucketed), per_rank);
    count = received.size();
    arcs.resize(count);
    copy_sync(arcs.data(), received.data(), count * sizeof(uint64_t), cudaMemcpyHostToDevice,
              stream_);
  });
  collectively([&] { build_device_graph(arcs, count, graph_, stream_); });
  tca_apps::allreduce(&graph_.local_arcs, &graph_.total_arcs, 1, tca_apps::Op::kSum);
}

LocalDegrees DeviceBackend::degrees() {
  return [this](const std::vector<uint64_t>& local, std::vector<int64_t>& degrees) {
    DeviceArray<uint64_t> at(local.size());
    DeviceArray<int64_t> result(local.size());
    copy_sync(at.data(), local.data(), at.bytes(), cudaMemcpyHostToDevice, stream_);
    device_degrees(graph_, at.data(), result.data(), local.size(), stream_);
    copy_sync(degrees.data(), result.data(), result.bytes(), cudaMemcpyDeviceToHost, stream_);
  };
}

}  // namespace

std::unique_ptr<Backend> make_device_backend(ThreadPool& pool, int rank) {
  return std::make_unique<DeviceBackend>(pool, rank);
}

bool device_available() {
  int device = 0;
  return tcaCudaDevice(&device) == TCA_SUCCESS;
}

}  // namespace bfs
