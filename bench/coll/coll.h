// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-coll's pieces (bench/coll/): what is measured and how each implementation is opened.
// main.cc is the driver; data.cc the values and their check; tca_host.cc the host-called tca
// collectives, tca_gpu.cc the GPU ones (stream-ordered and graph), mpi.cc ref.mpi, nccl.cc
// ref.nccl*; registry.cc lists the implementations and is the only file that knows which were
// built.
#pragma once

#include <tca/tca.h>
#include <tca/tca_coll.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tca_harness/table.h"

namespace tca_coll_bench {

extern int g_rank;
extern int g_ranks;

struct Shape {
  tcaCollKind kind;
  tcaDataType type;
  tcaRedOp op;
  size_t count;  // elements of the call (allgather: per rank)
  size_t send_bytes() const { return count * tcaDataTypeSize(type); }
  size_t result_bytes() const {
    return send_bytes() * (kind == TCA_COLL_ALLGATHER ? static_cast<size_t>(g_ranks) : 1);
  }
};

struct Buffers {
  tcaMemKind memory = TCA_MEM_CPU;
  void* send = nullptr;
  void* recv = nullptr;
  unsigned char* host = nullptr;  // GPU memory: the host copy that is filled and checked
};

// Writes this rank's contribution of iteration `round` into the send buffer (data.cc).
void fill_send(const Shape& shape, const Buffers& buffers, int round);
// Elements of this rank's result that are wrong after iteration `round`.
size_t wrong_elements(const Shape& shape, const Buffers& buffers, int round);

struct Row {
  std::string collective;
  std::string impl;
  size_t bytes;
  size_t count;
  std::string type;
  std::string op;
  double time_us;
  double algbw_GBps;
  double busbw_GBps;
  size_t wrong;
  std::string protocol{};        // tca on GPU memory: "ll" or "simple" (else empty)
  int channels = 0;              // with the protocol
  std::optional<bool> staged{};  // ref.mpi on GPU memory: copied through host memory
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  // Untimed set-up of what run(calls) needs (a CUDA graph of `calls` iterations).
  virtual void prepare(int /*calls*/) {}
  // `calls` iterations; on return the last one's result is in recvbuf.
  virtual void run(int calls) = 0;
  // What the row says about how the calls ran.
  virtual void describe(Row* /*row*/) const {}
};

// What the implementations share beyond shape and buffers.
struct Context {
  std::string mpi_missing;   // why ref.mpi cannot run, or ""
  bool mpi_staged = false;   // GPU memory and an MPI that is not CUDA-aware
  std::string nccl_missing;  // why ref.nccl* cannot run, or ""
};

enum class Source { kTca, kNccl, kMpi };
// How iterations are issued: host-called, stream-ordered, graph replay, stream-ordered with a
// synchronization per call (NCCL's counterpart of host-called).
enum class Form { kHost, kStream, kGraph, kSynced };

// The resident kernel's idle time of the tca.auto_resident row: longer than a batch's gaps.
constexpr unsigned kBenchResidentIdleUs = 2000;

struct Impl {
  std::string name;  // "tca.ring", "tca.auto_graph", "ref.nccl", "ref.mpi"
  Source source;
  Form form;
  tcaCollAlgorithm algorithm;     // tca only
  unsigned resident_idle_us = 0;  // tca, host-called only
};

// Why `impl` is not measured in this run, or "".
std::string skip_reason(const Impl& impl, const Context& context);
std::vector<Impl> all_impls(tcaMemKind memory);
std::unique_ptr<Implementation> open_impl(const Impl& impl, const Shape& shape,
                                          const Buffers& buffers, const Context& context);
// A tca collective object, freed (collectively) with its owner.
struct CollFree {
  void operator()(tcaColl coll) const;
};
using CollPtr = std::unique_ptr<tcaColl_st, CollFree>;
CollPtr new_collective(const Shape& shape, const Buffers& buffers, tcaCollAlgorithm algorithm,
                       unsigned resident_idle_us = 0);
// A GPU program's protocol and channels into the row (tca_gpu.cc; nothing without CUDA).
void describe_program(tcaColl coll, Row* row);

// Whether this program has GPU implementations (a CUDA build).
bool gpu_built();

// The implementations (registry.cc calls them).
std::unique_ptr<Implementation> open_tca_host(const Shape& shape, const Buffers& buffers,
                                              tcaCollAlgorithm algorithm,
                                              unsigned resident_idle_us);
std::unique_ptr<Implementation> open_tca_stream(const Shape& shape, const Buffers& buffers,
                                                tcaCollAlgorithm algorithm, Form form);
std::unique_ptr<Implementation> open_mpi_collective(const Shape& shape, const Buffers& buffers,
                                                    const Context& context);
std::unique_ptr<Implementation> open_nccl(const Shape& shape, const Buffers& buffers, Form form);

// ref.mpi's communicator where MPI runs (`missing` is ""), else the reason it is skipped
// (mpi.cc); whether MPI must stage GPU buffers through host memory.
void open_mpi(const std::string& missing, Context* context);
void close_mpi();
bool mpi_needs_staging();
// GPU memory: makes sure every rank has a GPU, finds out how MPI and NCCL (when `wants_nccl`)
// can run, and says so in the table. False (after saying why) where the run cannot go on.
bool open_gpu(const tca_harness::Table& table, bool wants_nccl, Context* context);
// NCCL for the ref.nccl* rows (nccl.cc): sets context->nccl_missing where it cannot run.
void open_nccl_library(const tca_harness::Table& table, Context* context);
void close_nccl_library();

}  // namespace tca_coll_bench
