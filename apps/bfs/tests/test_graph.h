// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// What the tests share: a graph built on every rank of the job from a whole edge list
// (each rank takes its even share, as from a file), searched on a backend with an exchange.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "exchange.h"
#include "search.h"

namespace bfs::test {

int world_rank();
int world_size();

// The devices to run a case on: "cpu", and "gpu" where every rank has a GPU and no GPU serves
// more than two ranks of its host.
std::vector<std::string> devices();
// The comm the reference searches take: mpi where the control layer runs over MPI, else tca.
CommKind reference_comm();

class TestGraph {
 public:
  // Collective: from the whole list (each rank takes its even share) ...
  TestGraph(const std::vector<Edge>& all_edges, uint64_t vertices, const std::string& device);
  // ... or from this rank's share of it.
  TestGraph(std::vector<Edge> mine, const EdgeListInfo& info, const std::string& device);

  const Partition& partition() const { return partition_; }
  Backend& backend() { return *backend_; }
  const std::vector<Edge>& my_edges() const { return mine_; }

  // Collective: a search from `root` with `comm`; afterwards exchange() holds the gathered
  // tree and tree() the same on the host. Returns false (and does nothing) where `comm` cannot
  // run here.
  bool search(vertex_t root, CommKind comm, DirectionMode mode = DirectionMode::kAuto);
  const SearchResult& result() const { return result_; }
  int64_t nedge() const { return nedge_; }
  Exchange& exchange() { return *exchange_; }
  // The gathered tree on the host (padded entries).
  std::vector<int64_t> parents();
  std::vector<int32_t> levels();
  // Writes one entry of the gathered tree on this rank (host or GPU memory).
  void plant(uint64_t vertex, int64_t parent, int32_t level);
  // Collective.
  Validation validate(vertex_t root);

 private:
  std::vector<Edge> mine_;
  ThreadPool pool_;
  Partition partition_;
  EdgeListInfo info_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Exchange> exchange_;
  std::unique_ptr<Engine> engine_;
  SearchResult result_;
  int64_t nedge_ = 0;
};

// The whole tuple list of a Kronecker graph.
std::vector<Edge> kronecker_edges(int scale, int edgefactor, uint64_t seed);

}  // namespace bfs::test
