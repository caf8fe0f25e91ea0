// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "test_graph.h"

#include "control.h"

#ifdef BFS_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <cstring>

#include "agree.h"
#include "tca_harness/ranks.h"

namespace bfs::test {
namespace {

#ifdef BFS_HAVE_CUDA
void check_cuda_copy(void* to, const void* from, size_t bytes, bool to_exchange) {
  // cudaMemcpy from pageable memory may return before its DMA ends: wait for the device.
  cudaError_t error =
      cudaMemcpy(to, from, bytes, to_exchange ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
  if (error == cudaSuccess) error = cudaDeviceSynchronize();
  if (error != cudaSuccess) throw Error(std::string("cudaMemcpy: ") + cudaGetErrorString(error));
}
#endif

// Copies between the exchange's tree (host or GPU memory) and the host.
void copy_bytes(void* to, const void* from, size_t bytes, Memory memory, bool to_exchange) {
  if (memory == Memory::kHost) {
    std::memcpy(to, from, bytes);
    return;
  }
#ifdef BFS_HAVE_CUDA
  check_cuda_copy(to, from, bytes, to_exchange);
#else
  (void)to_exchange;
  throw Error("GPU memory in a build without CUDA");
#endif
}

}  // namespace

int world_rank() { return tca_apps::rank(); }

int world_size() { return tca_apps::size(); }

namespace {

// Whether no GPU of this host serves more than two of its ranks. More ranks on one GPU repeat
// what two check, each exchange waiting out the other ranks' time slices: on one H200 the
// suite took 52 s on 2 ranks, 127 s on 3 and 167 s on 4.
bool gpus_shared_by_at_most_two() {
#ifdef BFS_HAVE_CUDA
  const int ranks_here = tca_apps::ranks_on_host();
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  return ranks_here <= 2 * gpus;
#else
  return true;
#endif
}

}  // namespace

CommKind reference_comm() {
  return tca_apps::mpi_unavailable().empty() ? CommKind::kMpi : CommKind::kTca;
}

std::vector<std::string> devices() {
  std::vector<std::string> list{"cpu"};
  // Every rank asks (under MPI a collective split) before any rank decides.
  const bool shared_by_two = gpus_shared_by_at_most_two();
  if (tca_apps::allreduce<int32_t>(device_available() && shared_by_two ? 1 : 0,
                                   tca_apps::Op::kAnd) != 0)
    list.push_back("gpu");
  return list;
}

std::vector<Edge> kronecker_edges(int scale, int edgefactor, uint64_t seed) {
  const KroneckerGenerator generator(scale, edgefactor, seed);
  std::vector<Edge> edges(generator.edges());
  for (uint64_t i = 0; i < edges.size(); ++i) edges[i] = generator.edge(i);
  return edges;
}

namespace {

EdgeListInfo whole_list_info(uint64_t tuples, uint64_t vertices) {
  EdgeListInfo info;
  info.vertices = vertices;
  info.tuples = tuples;
  info.share = even_share(tuples, world_rank(), world_size());
  return info;
}

std::vector<Edge> share_of(const std::vector<Edge>& all, const Range& share) {
  return std::vector<Edge>(all.begin() + static_cast<ptrdiff_t>(share.first),
                           all.begin() + static_cast<ptrdiff_t>(share.last));
}

}  // namespace

TestGraph::TestGraph(const std::vector<Edge>& all_edges, uint64_t vertices,
                     const std::string& device)
    : TestGraph(share_of(all_edges, whole_list_info(all_edges.size(), vertices).share),
                whole_list_info(all_edges.size(), vertices), device) {}

TestGraph::TestGraph(std::vector<Edge> mine, const EdgeListInfo& info, const std::string& device)
    : mine_(std::move(mine)), pool_(2), partition_(info.vertices, world_size()), info_(info) {
  backend_ = device == "gpu" ? make_device_backend(pool_, world_rank())
                             : make_host_backend(pool_, world_rank());
  backend_->take(mine_, info_);
  backend_->build(partition_);
}

bool TestGraph::search(vertex_t root, CommKind comm, DirectionMode mode) {
  engine_.reset();
  exchange_.reset();
  ExchangeSetup setup;
  setup.rank = world_rank();
  setup.partition = partition_;
  setup.memory = backend_->memory();
  setup.stream = backend_->stream();
  std::string unavailable;
  exchange_ = make_exchange(comm, setup, unavailable);
  if (!exchange_) return false;
  engine_ = backend_->make_engine(*exchange_);
  const std::vector<int64_t> degree =
      global_degrees(partition_, world_rank(), {root}, backend_->degrees());
  SearchSettings settings;
  settings.mode = mode;
  result_ = run_search(*engine_, *exchange_, root, degree[0], backend_->total_arcs(),
                       partition_.vertices(), settings);
  const uint64_t all =
      tca_apps::allreduce<uint64_t>(engine_->visited_tuple_ends(), tca_apps::Op::kSum);
  nedge_ = static_cast<int64_t>(all / 2);
  return true;
}

std::vector<int64_t> TestGraph::parents() {
  std::vector<int64_t> out(partition_.padded());
  copy_bytes(out.data(), exchange_->parents(), out.size() * sizeof(int64_t), backend_->memory(),
             false);
  return out;
}

std::vector<int32_t> TestGraph::levels() {
  std::vector<int32_t> out(partition_.padded());
  copy_bytes(out.data(), exchange_->levels(), out.size() * sizeof(int32_t), backend_->memory(),
             false);
  return out;
}

void TestGraph::plant(uint64_t vertex, int64_t parent, int32_t level) {
  copy_bytes(exchange_->parents() + vertex, &parent, sizeof(parent), backend_->memory(), true);
  copy_bytes(exchange_->levels() + vertex, &level, sizeof(level), backend_->memory(), true);
}

Validation TestGraph::validate(vertex_t root) { return backend_->validate(*exchange_, root); }

}  // namespace bfs::test
