// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The CPU backend: tuples, graph and searches in host memory, shared by the rank's threads.
#include <utility>

#include "backend.h"
#include "engine_host.h"
#include "graph.h"

namespace bfs {
namespace {

class HostBackend final : public Backend {
 public:
  HostBackend(ThreadPool& pool, int rank) : pool_(pool), rank_(rank) {}

  Memory memory() const override { return Memory::kHost; }
  void* stream() override { return nullptr; }
  std::string describe() const override {
    return "cpu, " + std::to_string(pool_.size()) + " thread" + (pool_.size() > 1 ? "s" : "") +
           " per rank";
  }

  void generate(const KroneckerGenerator& generator, const EdgeListInfo& info) override {
    info_ = info;
    edges_ = generate_edges(generator, info.share, pool_);
  }
  void take(std::vector<Edge> edges, const EdgeListInfo& info) override {
    info_ = info;
    edges_ = std::move(edges);
  }
  std::vector<Edge> host_edges() override { return edges_; }

  void build(const Partition& partition) override {
    graph_ = build_graph(edges_, partition, pool_);
  }
  uint64_t total_arcs() const override { return graph_.total_arcs; }
  LocalDegrees degrees() override {
    return [this](const std::vector<uint64_t>& local, std::vector<int64_t>& degrees) {
      for (size_t i = 0; i < local.size(); ++i)
        degrees[i] = static_cast<int64_t>(graph_.degree(local[i]));
    };
  }

  std::unique_ptr<Engine> make_engine(Exchange& exchange) override {
    return std::make_unique<HostEngine>(graph_, exchange, pool_);
  }
  Validation validate(Exchange& exchange, vertex_t root) override {
    return validate_host(graph_.partition, rank_, edges_, info_.share.first, root,
                         exchange.parents(), exchange.levels(), pool_);
  }
  std::vector<int64_t> local_parents(Exchange& exchange) override {
    const int64_t* block = exchange.parents() + rank_ * graph_.partition.per_rank();
    return std::vector<int64_t>(block, block + graph_.local_vertices);
  }

 private:
  ThreadPool& pool_;
  int rank_;
  EdgeListInfo info_;
  std::vector<Edge> edges_;
  HostGraph graph_;
};

}  // namespace

std::unique_ptr<Backend> make_host_backend(ThreadPool& pool, int rank) {
  return std::make_unique<HostBackend>(pool, rank);
}

#ifndef BFS_HAVE_CUDA
std::unique_ptr<Backend> make_device_backend(ThreadPool&, int) {
  throw Error("--device gpu needs a build with CUDA");
}
bool device_available() { return false; }
#endif

}  // namespace bfs
