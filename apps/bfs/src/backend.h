// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A compute backend as the program drives it: where the input tuples and the graph live (host
// memory or GPU memory), kernel 1, the engine of kernel 2, the validation and the counts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "edge_list.h"
#include "engine.h"
#include "exchange.h"
#include "kronecker.h"
#include "parallel.h"
#include "partition.h"
#include "roots.h"
#include "validate.h"

namespace bfs {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual Memory memory() const = 0;
  virtual void* stream() = 0;  // GPU ranks: the cudaStream_t of every kernel and exchange
  virtual std::string describe() const = 0;

  // The input tuples of this rank (info.share of the list).
  virtual void generate(const KroneckerGenerator& generator, const EdgeListInfo& info) = 0;
  virtual void take(std::vector<Edge> edges, const EdgeListInfo& info) = 0;
  virtual std::vector<Edge> host_edges() = 0;  // a host copy (for --write-edges)

  // Kernel 1 (collective). The caller times it.
  virtual void build(const Partition& partition) = 0;
  virtual uint64_t total_arcs() const = 0;
  virtual LocalDegrees degrees() = 0;

  // Kernel 2's engine, working in `exchange`'s buffers.
  virtual std::unique_ptr<Engine> make_engine(Exchange& exchange) = 0;
  // Collective: the checks of the gathered tree in `exchange` (after gather_tree).
  virtual Validation validate(Exchange& exchange, vertex_t root) = 0;
  // This rank's block of the gathered parents, on the host.
  virtual std::vector<int64_t> local_parents(Exchange& exchange) = 0;
};

std::unique_ptr<Backend> make_host_backend(ThreadPool& pool, int rank);
// GPU ranks (backend_cuda.cu): throws Error where this build or rank has no GPU.
std::unique_ptr<Backend> make_device_backend(ThreadPool& pool, int rank);
// Whether this rank can run the GPU backend (a CUDA build and a GPU).
bool device_available();

}  // namespace bfs
