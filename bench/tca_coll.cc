// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-coll: allreduce and allgather of every tca algorithm and of the automatic choice, next
// to MPI_Allreduce / MPI_Allgather (and NCCL, on GPU buffers) on the same buffers, sizes and
// ranks, in the layout of nccl-tests (size, count, type, redop, time, algbw, busbw, #wrong).
//
// size is the result's bytes (allgather: every rank's data together); count is the elements
// of the call (allgather: per rank). time is the slowest rank's mean per call, median of the
// timed batches. algbw = size / time; busbw = algbw * 2(n-1)/n (allreduce) or (n-1)/n
// (allgather), as nccl-tests. Values are small integers, exact in every type, so results are
// compared exactly: once after the timed batches, or with -c every iteration on fresh data
// (then only the calls themselves are timed).
//
// --memory gpu puts the buffers in GPU memory (tcaMalloc(TCA_MEM_GPU)), where a tca collective
// is a GPU program. It is issued host-called (tca.<alg>: tcaCollStart + tcaCollWait per call),
// stream-ordered (tca.<alg>_stream: N tcaCollStartStream back to back on one stream, one
// synchronization, time / N, as nccl-tests' eager mode) and as a graph (tca.<alg>_graph: N
// iterations captured in one CUDA graph, replayed, as nccl-tests -G). NCCL, loaded at run time,
// runs both ways (ref.nccl, ref.nccl_graph). Data is written and checked through host copies.
//
// Control between the ranks (barriers, the slowest time, the wrong elements) runs through tca's
// bootstrap, so the program needs no MPI. ref.mpi is built where MPI is (TCA_BENCH_MPI) and runs
// where an MPI launcher started the job; elsewhere it is skipped with a note saying why.
#ifdef TCA_BENCH_MPI
#include <mpi.h>
#endif
#include <tca/tca.h>
#include <tca/tca_coll.h>
#include <tca/tca_trace.h>

#include "tca_harness/check.h"
#include "tca_harness/launch.h"
#include "tca_harness/options.h"
#include "tca_harness/ranks.h"
#include "tca_harness/report.h"
#include "tca_harness/sizes.h"
#include "tca_harness/stats.h"
#include "tca_harness/table.h"
#include "tca_harness/timer.h"

#ifdef TCA_HARNESS_CUDA
#include <cuda_runtime_api.h>
#include <tca/tca_coll_cuda.h>
#include <tca/tca_cuda.h>
#if defined(TCA_BENCH_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_Query_cuda_support
#endif

#include "tca_harness/cuda_check.h"
#ifdef TCA_HARNESS_NCCL
#include "tca_harness/nccl.h"
#endif
#endif

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

// Failures print "tca-coll: rank R: ..." and end the job.
using tca_harness::all_ranks;
using tca_harness::check;
using tca_harness::describe_failure;
using tca_harness::die;

int g_rank = 0;
int g_ranks = 1;

// ---- data: small integers, exact in every type ----

int64_t contribution(int rank, size_t i, int round) {
  return static_cast<int64_t>((rank * 37 + i * 11 + round * 23) % 101) - 40;
}

int64_t reduced(tcaRedOp op, size_t i, int round) {
  int64_t result = contribution(0, i, round);
  for (int r = 1; r < g_ranks; ++r) {
    const int64_t value = contribution(r, i, round);
    result = op == TCA_SUM   ? result + value
             : op == TCA_MAX ? std::max(result, value)
                             : std::min(result, value);
  }
  return result;
}

template <typename T>
void fill_typed(void* buffer, size_t count, int rank, int round) {
  T* values = static_cast<T*>(buffer);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(contribution(rank, i, round));
}

template <typename T, typename Expected>
size_t count_wrong_typed(const void* buffer, size_t count, Expected expected) {
  const T* values = static_cast<const T*>(buffer);
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += values[i] != static_cast<T>(expected(i));
  return wrong;
}

void fill(tcaDataType type, void* buffer, size_t count, int rank, int round) {
  switch (type) {
    case TCA_INT32:
      fill_typed<int32_t>(buffer, count, rank, round);
      break;
    case TCA_INT64:
      fill_typed<int64_t>(buffer, count, rank, round);
      break;
    case TCA_FLOAT:
      fill_typed<float>(buffer, count, rank, round);
      break;
    case TCA_DOUBLE:
      fill_typed<double>(buffer, count, rank, round);
      break;
  }
}

template <typename Expected>
size_t count_wrong(tcaDataType type, const void* buffer, size_t count, Expected expected) {
  switch (type) {
    case TCA_INT32:
      return count_wrong_typed<int32_t>(buffer, count, expected);
    case TCA_INT64:
      return count_wrong_typed<int64_t>(buffer, count, expected);
    case TCA_FLOAT:
      return count_wrong_typed<float>(buffer, count, expected);
    case TCA_DOUBLE:
      return count_wrong_typed<double>(buffer, count, expected);
  }
  return count;
}

// ---- what is measured ----

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

// Writes this rank's contribution of iteration `round` into the send buffer.
void fill_send(const Shape& shape, const Buffers& buffers, int round) {
#ifdef TCA_HARNESS_CUDA
  if (buffers.memory == TCA_MEM_GPU) {
    fill(shape.type, buffers.host, shape.count, g_rank, round);
    check(cudaMemcpy(buffers.send, buffers.host, shape.send_bytes(), cudaMemcpyHostToDevice),
          "cudaMemcpy");
    // From pageable memory the copy may still be landing; no stream may read it before.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return;
  }
#endif
  fill(shape.type, buffers.send, shape.count, g_rank, round);
}

// Elements of this rank's result that are wrong after iteration `round`.
size_t wrong_elements(const Shape& shape, const Buffers& buffers, int round) {
  const unsigned char* result = static_cast<const unsigned char*>(buffers.recv);
#ifdef TCA_HARNESS_CUDA
  if (buffers.memory == TCA_MEM_GPU) {
    check(cudaMemcpy(buffers.host, buffers.recv, shape.result_bytes(), cudaMemcpyDeviceToHost),
          "cudaMemcpy");
    result = buffers.host;
  }
#endif
  if (shape.kind == TCA_COLL_ALLREDUCE)
    return count_wrong(shape.type, result, shape.count,
                       [&](size_t i) { return reduced(shape.op, i, round); });
  size_t wrong = 0;
  for (int from = 0; from < g_ranks; ++from)
    wrong += count_wrong(shape.type, result + from * shape.send_bytes(), shape.count,
                         [&](size_t i) { return contribution(from, i, round); });
  return wrong;
}

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

struct CollFree {
  void operator()(tcaColl coll) const { check(tcaCollFree(coll), "tcaCollFree"); }
};
using CollPtr = std::unique_ptr<tcaColl_st, CollFree>;  // freeing is collective

CollPtr new_collective(const Shape& shape, const Buffers& buffers, tcaCollAlgorithm algorithm,
                       unsigned resident_idle_us = 0) {
  tcaCollConfig config{};
  config.algorithm = algorithm;
  config.memory = buffers.memory;
  config.resident_idle_us = resident_idle_us;
  tcaColl coll = nullptr;
  check(tcaCollNew(&coll, shape.kind, shape.type, shape.op, shape.count, buffers.send, buffers.recv,
                   &config),
        "tcaCollNew");
  return CollPtr(coll);
}

#ifdef TCA_HARNESS_CUDA
void describe_program(tcaColl coll, Row* row) {
  int ll = 0;
  check(tcaCollGetProtocol(coll, &ll, &row->channels), "tcaCollGetProtocol");
  row->protocol = ll ? "ll" : "simple";
}
#endif

// Host-called: tcaCollStart + tcaCollWait per call (with resident_idle_us: served by a resident
// kernel where the object runs in one block).
class TcaCollective final : public Implementation {
 public:
  TcaCollective(const Shape& shape, const Buffers& buffers, tcaCollAlgorithm algorithm,
                unsigned resident_idle_us)
      : coll_(new_collective(shape, buffers, algorithm, resident_idle_us)),
        memory_(buffers.memory) {}
  void run(int calls) override {
    for (int i = 0; i < calls; ++i) {
      check(tcaCollStart(coll_.get()), "tcaCollStart");
      check(tcaCollWait(coll_.get()), "tcaCollWait");
    }
  }
#ifdef TCA_HARNESS_CUDA
  void describe(Row* row) const override {
    if (memory_ == TCA_MEM_GPU) describe_program(coll_.get(), row);
  }
#endif

 private:
  CollPtr coll_;
  [[maybe_unused]] tcaMemKind memory_;
};

#ifdef TCA_BENCH_MPI
MPI_Datatype mpi_type(tcaDataType type) {
  switch (type) {
    case TCA_INT32:
      return MPI_INT32_T;
    case TCA_INT64:
      return MPI_INT64_T;
    case TCA_FLOAT:
      return MPI_FLOAT;
    case TCA_DOUBLE:
      return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(tcaRedOp op) {
  switch (op) {
    case TCA_SUM:
      return MPI_SUM;
    case TCA_MAX:
      return MPI_MAX;
    case TCA_MIN:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

// MPI on the buffers themselves (GPU memory: a CUDA-aware MPI).
class MpiCollective final : public Implementation {
 public:
  MpiCollective(const Shape& shape, const Buffers& buffers, MPI_Comm comm)
      : shape_(shape), buffers_(buffers), comm_(comm) {}
  void run(int calls) override {
    const int count = static_cast<int>(shape_.count);
    for (int i = 0; i < calls; ++i) {
      if (shape_.kind == TCA_COLL_ALLREDUCE)
        MPI_Allreduce(buffers_.send, buffers_.recv, count, mpi_type(shape_.type), mpi_op(shape_.op),
                      comm_);
      else
        MPI_Allgather(buffers_.send, count, mpi_type(shape_.type), buffers_.recv, count,
                      mpi_type(shape_.type), comm_);
    }
  }
  void describe(Row* row) const override {
    if (buffers_.memory == TCA_MEM_GPU) row->staged = false;
  }

 private:
  Shape shape_;
  Buffers buffers_;
  MPI_Comm comm_;
};
#endif  // TCA_BENCH_MPI

#ifdef TCA_HARNESS_CUDA
// The benchmark's stream on this rank's GPU (made once tcaInit has chosen the device).
cudaStream_t bench_stream() {
  static const cudaStream_t stream = [] {
    cudaStream_t created = nullptr;
    check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreate");
    return created;
  }();
  return stream;
}

#ifdef TCA_BENCH_MPI
bool mpi_cuda_aware() {
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

// MPI that cannot read GPU memory: every call copies the contribution to pinned host memory
// and the result back, inside the timed call (that is what such an MPI costs an application).
class StagedMpiCollective final : public Implementation {
 public:
  StagedMpiCollective(const Shape& shape, const Buffers& buffers, MPI_Comm comm)
      : shape_(shape), gpu_(buffers) {
    check(cudaMallocHost(&host_.send, shape.send_bytes()), "cudaMallocHost");
    check(cudaMallocHost(&host_.recv, shape.result_bytes()), "cudaMallocHost");
    mpi_ = std::make_unique<MpiCollective>(shape, host_, comm);
  }
  ~StagedMpiCollective() override {
    cudaFreeHost(host_.send);
    cudaFreeHost(host_.recv);
  }
  void run(int calls) override {
    for (int i = 0; i < calls; ++i) {
      check(cudaMemcpy(host_.send, gpu_.send, shape_.send_bytes(), cudaMemcpyDeviceToHost),
            "cudaMemcpy");
      mpi_->run(1);
      check(cudaMemcpy(gpu_.recv, host_.recv, shape_.result_bytes(), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    }
  }
  void describe(Row* row) const override { row->staged = true; }

 private:
  Shape shape_;
  Buffers gpu_;
  Buffers host_;
  std::unique_ptr<MpiCollective> mpi_;
};
#endif  // TCA_BENCH_MPI

// One iteration of a collective, enqueued on a stream.
class StreamOp {
 public:
  virtual ~StreamOp() = default;
  virtual void enqueue(cudaStream_t stream) = 0;
  virtual void describe(Row* /*row*/) const {}
};

class TcaStreamOp final : public StreamOp {
 public:
  TcaStreamOp(const Shape& shape, const Buffers& buffers, tcaCollAlgorithm algorithm)
      : coll_(new_collective(shape, buffers, algorithm)) {}
  void enqueue(cudaStream_t stream) override {
    check(tcaCollStartStream(coll_.get(), stream), "tcaCollStartStream");
  }
  void describe(Row* row) const override { describe_program(coll_.get(), row); }

 private:
  CollPtr coll_;
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
      check(cudaGraphLaunch(graph_of(calls), bench_stream()), "cudaGraphLaunch");
    else
      for (int i = 0; i < calls; ++i) {
        op_->enqueue(bench_stream());
        if (synced_) check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
      }
    check(cudaStreamSynchronize(bench_stream()), "cudaStreamSynchronize");
  }
  void describe(Row* row) const override { op_->describe(row); }

 private:
  cudaGraphExec_t graph_of(int calls) {
    if (const auto found = graphs_.find(calls); found != graphs_.end()) return found->second;
    cudaGraph_t graph = nullptr;
    // Thread-local: a library thread's CUDA calls must not break this capture.
    check(cudaStreamBeginCapture(bench_stream(), cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    for (int i = 0; i < calls; ++i) op_->enqueue(bench_stream());
    check(cudaStreamEndCapture(bench_stream(), &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    check(cudaGraphUpload(exec, bench_stream()), "cudaGraphUpload");  // not in the first replay
    graphs_[calls] = exec;
    return exec;
  }

  std::unique_ptr<StreamOp> op_;
  bool graph_;
  bool synced_;
  std::map<int, cudaGraphExec_t> graphs_;  // by iterations
};

#ifdef TCA_HARNESS_NCCL
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
#endif  // TCA_HARNESS_NCCL
#endif  // TCA_HARNESS_CUDA

// What the implementations share beyond shape and buffers.
struct Context {
#ifdef TCA_BENCH_MPI
  MPI_Comm comm = MPI_COMM_NULL;  // ref.mpi's own communicator, where MPI runs
#endif
  std::string mpi_missing;   // why ref.mpi cannot run, or ""
  bool mpi_staged = false;   // GPU memory and an MPI that is not CUDA-aware
  std::string nccl_missing;  // why ref.nccl* cannot run, or ""
#ifdef TCA_HARNESS_NCCL
  std::unique_ptr<tca_harness::Nccl> nccl;
#endif
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

std::vector<Impl> all_impls(tcaMemKind memory) {
  const bool gpu = memory == TCA_MEM_GPU;
  std::vector<Impl> impls;
  auto add_tca = [&](tcaCollAlgorithm algorithm) {
    const std::string name = std::string("tca.") + tcaCollAlgorithmName(algorithm);
    impls.push_back({name, Source::kTca, Form::kHost, algorithm});
    if (!gpu) return;
    impls.push_back({name + "_stream", Source::kTca, Form::kStream, algorithm});
    impls.push_back({name + "_graph", Source::kTca, Form::kGraph, algorithm});
  };
  for (int a = TCA_COLL_RING; a < TCA_COLL_ALGORITHMS; ++a)
    add_tca(static_cast<tcaCollAlgorithm>(a));
  add_tca(TCA_COLL_AUTO);
  if (gpu) {
    impls.push_back(
        {"tca.auto_resident", Source::kTca, Form::kHost, TCA_COLL_AUTO, kBenchResidentIdleUs});
    impls.push_back({"ref.nccl", Source::kNccl, Form::kStream, TCA_COLL_AUTO});
    impls.push_back({"ref.nccl_graph", Source::kNccl, Form::kGraph, TCA_COLL_AUTO});
    impls.push_back({"ref.nccl_sync", Source::kNccl, Form::kSynced, TCA_COLL_AUTO});
  }
  impls.push_back({"ref.mpi", Source::kMpi, Form::kHost, TCA_COLL_AUTO});
  return impls;
}

// Why `impl` is not measured in this run, or "".
std::string skip_reason(const Impl& impl, const Context& context) {
  if (impl.source == Source::kTca && impl.algorithm == TCA_COLL_NEIGHBOR_EXCHANGE &&
      g_ranks % 2 != 0)
    return "on an odd rank count it runs as tca.ring";
  if (impl.source == Source::kNccl) return context.nccl_missing;
  if (impl.source == Source::kMpi) return context.mpi_missing;
  return "";
}

std::unique_ptr<Implementation> open_impl(const Impl& impl, const Shape& shape,
                                          const Buffers& buffers,
                                          [[maybe_unused]] const Context& context) {
  if (impl.source == Source::kMpi) {
#ifdef TCA_BENCH_MPI
#ifdef TCA_HARNESS_CUDA
    if (context.mpi_staged)
      return std::make_unique<StagedMpiCollective>(shape, buffers, context.comm);
#endif
    return std::make_unique<MpiCollective>(shape, buffers, context.comm);
#else
    die("ref.mpi needs MPI");  // unreachable: skip_reason says why it is skipped
#endif
  }
  if (impl.form == Form::kHost)
    return std::make_unique<TcaCollective>(shape, buffers, impl.algorithm, impl.resident_idle_us);
#ifdef TCA_HARNESS_CUDA
  std::unique_ptr<StreamOp> op;
#ifdef TCA_HARNESS_NCCL
  if (impl.source == Source::kNccl)
    op = std::make_unique<NcclStreamOp>(*context.nccl, shape, buffers);
#endif
  if (impl.source == Source::kTca)
    op = std::make_unique<TcaStreamOp>(shape, buffers, impl.algorithm);
  using Issue = StreamCollective::Issue;
  const Issue issue = impl.form == Form::kGraph    ? Issue::kGraph
                      : impl.form == Form::kSynced ? Issue::kSynced
                                                   : Issue::kEager;
  return std::make_unique<StreamCollective>(std::move(op), issue);
#else
  die(impl.name + " needs a CUDA build");  // unreachable: --memory gpu is refused
#endif
}

// ---- options and output ----

struct Options {
  size_t min_bytes = 8;
  size_t max_bytes = size_t{16} << 20;
  size_t factor = 2;
  int warmup = 5;
  int iterations = 0;  // 0: scaled by size
  int batches = 5;
  bool check_every_iteration = false;
  std::string collective = "all";
  std::string type = "double";
  std::string op = "sum";
  std::string transport = "auto";
  std::string memory = "cpu";
  std::vector<std::string> impls;
  bool json = false;
};

const std::map<std::string, tcaDataType> kTypeNames = {
    {"int32", TCA_INT32}, {"int64", TCA_INT64}, {"float", TCA_FLOAT}, {"double", TCA_DOUBLE}};
const std::map<std::string, tcaRedOp> kOpNames = {
    {"sum", TCA_SUM}, {"max", TCA_MAX}, {"min", TCA_MIN}};

// Default iterations per batch: about 64 MiB of results, within [20, 2000].
int iterations_for(const Options& options, size_t bytes) {
  if (options.iterations > 0) return options.iterations;
  return static_cast<int>(std::clamp<size_t>((size_t{64} << 20) / bytes, 20, 2000));
}

std::vector<size_t> sizes(const Options& options) {
  return tca_harness::size_series(options.min_bytes, options.max_bytes, options.factor);
}

// The table (stdout, or stderr with --json) and the JSON report, written by rank 0. The last
// column on GPU memory: a tca program's protocol x channels, or whether MPI was staged.
struct Output {
  Output(const Options& options, int rank)
      : table(options.json, rank == 0), report("tca-coll", rank == 0) {
    using tca_harness::Align;
    std::vector<tca_harness::Column> columns = {{"collective", 10},
                                                {"impl", 29, Align::kLeft, 3, "", "  "},
                                                {"size(B)", 12},
                                                {"count", 12, Align::kRight, 3, "(elements)"},
                                                {"type", 7},
                                                {"redop", 6},
                                                {"time(us)", 10, Align::kRight, 2},
                                                {"algbw", 8, Align::kRight, 3, "(GB/s)"},
                                                {"busbw", 8, Align::kRight, 3, "(GB/s)"},
                                                {"#wrong", 6}};
    if (options.memory == "gpu") columns.push_back({"notes", 0, Align::kLeft, 3, "", "  "});
    table.set_columns(std::move(columns));
    report.set("ranks", g_ranks);
    report.set("memory", options.memory);
  }
  tca_harness::Table table;
  tca_harness::Report report;
};

// The automatic choice over this run's sizes, as ranges of equal choice.
void print_auto_table(const Options& options, const Output& output, tcaCollKind kind,
                      tcaMemKind memory, const char* name) {
  std::string line;
  tcaCollAlgorithm current = TCA_COLL_AUTO;
  size_t range_start = 0;
  size_t previous = 0;
  auto close_range = [&] {
    if (current == TCA_COLL_AUTO) return;
    line += "  " + tca_harness::format_size(range_start) + ".." +
            tca_harness::format_size(previous) + ": " + tcaCollAlgorithmName(current) + ";";
  };
  for (size_t bytes : sizes(options)) {
    tcaCollAlgorithm choice = TCA_COLL_AUTO;
    check(tcaCollChooseAlgorithm(kind, memory, bytes, g_ranks, &choice), "tcaCollChooseAlgorithm");
    if (choice != current) {
      close_range();
      current = choice;
      range_start = bytes;
    }
    previous = bytes;
  }
  close_range();
  output.table.comment(tca_harness::format("tca.auto %s on %d ranks, %s memory:%s", name, g_ranks,
                                           options.memory.c_str(), line.c_str()));
}

// ---- the driver ----

// Seconds per call of one batch on this rank; `wrong` gathers this rank's wrong elements.
// A traced run (TCA_TRACE) marks each timed batch as the phase `phase` (tca-sim replays it).
double time_batch(Implementation& impl, const Shape& shape, const Buffers& buffers, int iterations,
                  bool check_each, int* round, size_t* wrong, const std::string& phase) {
  tca_harness::barrier();
  if (!check_each) {
    tcaTracePhaseBegin(phase.c_str());
    const double start = tca_harness::now_seconds();
    impl.run(iterations);
    const double seconds = (tca_harness::now_seconds() - start) / iterations;
    tcaTracePhaseEnd(phase.c_str());
    return seconds;
  }
  double busy = 0;
  for (int i = 0; i < iterations; ++i) {
    ++*round;
    fill_send(shape, buffers, *round);
    const double start = tca_harness::now_seconds();
    impl.run(1);
    busy += tca_harness::now_seconds() - start;
    *wrong += wrong_elements(shape, buffers, *round);
  }
  return busy / iterations;
}

Row measure(const Impl& impl_spec, const Shape& shape, const Buffers& buffers,
            const Options& options, const Context& context) {
  std::unique_ptr<Implementation> impl = open_impl(impl_spec, shape, buffers, context);
  int round = 0;
  fill_send(shape, buffers, round);
  size_t wrong = 0;
  const int iterations = iterations_for(options, shape.result_bytes());
  if (options.warmup > 0) impl->run(options.warmup);
  impl->prepare(options.check_every_iteration ? 1 : iterations);
  std::vector<double> seconds;
  const std::string phase =
      std::string(shape.kind == TCA_COLL_ALLGATHER ? "allgather." : "allreduce.") + impl_spec.name +
      "." + std::to_string(shape.result_bytes());
  for (int batch = 0; batch < options.batches; ++batch)
    seconds.push_back(time_batch(*impl, shape, buffers, iterations, options.check_every_iteration,
                                 &round, &wrong, phase));
  if (!options.check_every_iteration) wrong = wrong_elements(shape, buffers, round);

  const double slowest = tca_harness::max_over_ranks(tca_harness::median(seconds));
  const uint64_t wrong_total = tca_harness::sum_over_ranks(wrong);

  const double n = g_ranks;
  const double algbw = shape.result_bytes() / slowest / 1e9;
  const double factor = shape.kind == TCA_COLL_ALLREDUCE ? 2 * (n - 1) / n : (n - 1) / n;
  Row row{shape.kind == TCA_COLL_ALLREDUCE ? "allreduce" : "allgather",
          impl_spec.name,
          shape.result_bytes(),
          shape.count,
          options.type,
          shape.kind == TCA_COLL_ALLREDUCE ? options.op : "none",
          slowest * 1e6,
          algbw,
          algbw * factor,
          static_cast<size_t>(wrong_total)};
  impl->describe(&row);
  impl.reset();  // collective: every rank frees here
  return row;
}

// The last column on GPU memory: a tca program's protocol x channels, or whether MPI was
// staged through host memory.
std::string notes(const Row& row) {
  if (!row.protocol.empty()) return row.protocol + " x" + std::to_string(row.channels);
  if (row.staged.has_value()) return *row.staged ? "staged" : "device";
  return "";
}

void report_row(Output* output, const Row& row) {
  output->table.row({row.collective, row.impl, row.bytes, row.count, row.type, row.op, row.time_us,
                     row.algbw_GBps, row.busbw_GBps, row.wrong, notes(row)});
  nlohmann::ordered_json json_row = {{"collective", row.collective},
                                     {"impl", row.impl},
                                     {"bytes", row.bytes},
                                     {"count", row.count},
                                     {"type", row.type},
                                     {"op", row.op},
                                     {"time_us", row.time_us},
                                     {"algbw_GBps", row.algbw_GBps},
                                     {"busbw_GBps", row.busbw_GBps},
                                     {"wrong", row.wrong}};
  if (!row.protocol.empty()) {
    json_row["protocol"] = row.protocol;
    json_row["channels"] = row.channels;
  }
  if (row.staged.has_value()) json_row["staged"] = *row.staged;
  output->report.add_row(std::move(json_row));
}

void add_options(tca_harness::Cli& cli, Options& options,
                 const std::vector<std::string>& impl_names) {
  CLI::App& app = cli.app();
  cli.add_size("-b,--minbytes", options.min_bytes, "Smallest result size", 1, size_t{1} << 31);
  cli.add_size("-e,--maxbytes", options.max_bytes, "Largest result size", 1, size_t{1} << 31);
  app.add_option("-f,--stepfactor", options.factor, "Each size is the previous one times this")
      ->check(CLI::Range(size_t{2}, size_t{1024}))
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", options.warmup, "Untimed calls before each size")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-n,--iters", options.iterations,
                 "Calls per timed batch (0: 64 MiB / size, within [20, 2000])")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-r,--batches", options.batches, "Timed batches; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("-c,--check", options.check_every_iteration,
                 "1: fresh data and a full check in every iteration (only the calls are "
                 "timed); 0: one check after the timed batches")
      ->capture_default_str();
  app.add_option("--collective", options.collective, "allreduce, allgather or all")
      ->check(CLI::IsMember({"allreduce", "allgather", "all"}))
      ->capture_default_str();
  app.add_option("-d,--datatype", options.type, "int32, int64, float or double")
      ->check(CLI::IsMember({"int32", "int64", "float", "double"}))
      ->capture_default_str();
  app.add_option("-o,--op", options.op, "Reduction of allreduce: sum, max or min")
      ->check(CLI::IsMember({"sum", "max", "min"}))
      ->capture_default_str();
  app.add_option("--transport", options.transport, "tca transport: auto, shm or mpi")
      ->check(CLI::IsMember({"auto", "shm", "mpi"}))
      ->capture_default_str();
  app.add_option("--memory", options.memory,
                 "Where the buffers live: cpu, or gpu (a GPU per rank; adds the _stream and "
                 "_graph rows and NCCL)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  cli.add_repeatable("-i,--impl", options.impls, "Only these implementations (repeatable)",
                     impl_names);
  cli.add_json(options.json);
}

bool selected(const Options& options, const Impl& impl) {
  return options.impls.empty() ||
         std::find(options.impls.begin(), options.impls.end(), impl.name) != options.impls.end();
}

// Refuses what this build or memory kind cannot run.
void validate(const Options& options) {
  if (options.min_bytes > options.max_bytes)
    throw CLI::ValidationError("--minbytes", "must not exceed --maxbytes");
  if (options.memory == "cpu") {
    std::vector<std::string> cpu_names;
    for (const Impl& impl : all_impls(TCA_MEM_CPU)) cpu_names.push_back(impl.name);
    for (const std::string& name : options.impls)
      if (std::find(cpu_names.begin(), cpu_names.end(), name) == cpu_names.end())
        throw CLI::ValidationError("--impl", name + " needs --memory gpu");
  }
#ifndef TCA_HARNESS_CUDA
  if (options.memory == "gpu")
    throw CLI::ValidationError("--memory", "gpu needs a CUDA build of tca-coll");
#endif
}

#ifdef TCA_HARNESS_CUDA
// GPU memory: makes sure every rank has a GPU, and finds out how MPI and NCCL can run.
// False (after saying why) where the run cannot go on.
bool open_gpu(const Options& options, const Output& output, const std::vector<Impl>& impls,
              Context* context) {
  int device = -1;
  const tcaResult has_gpu = tcaCudaDevice(&device);
  if (has_gpu != TCA_SUCCESS)
    std::fprintf(stderr, "tca-coll: rank %d: --memory gpu: %s\n", g_rank,
                 describe_failure(has_gpu, "tcaCudaDevice").c_str());
  if (!all_ranks(has_gpu == TCA_SUCCESS)) return false;

#ifdef TCA_BENCH_MPI
  if (context->mpi_missing.empty()) context->mpi_staged = !all_ranks(mpi_cuda_aware());
#endif
  output.table.comment(tca_harness::format(
      "memory gpu: tca.<alg>: tcaCollStart + tcaCollWait per call; _stream: N "
      "tcaCollStartStream back to back on one stream, one cudaStreamSynchronize; _graph: "
      "N iterations in one CUDA graph, replayed; time / N; tca.auto_resident: host-called, "
      "served by a resident kernel (resident_idle_us %u) where the object runs in one "
      "block",
      kBenchResidentIdleUs));
  if (context->mpi_missing.empty())
    output.table.comment(std::string("ref.mpi: ") +
                         (context->mpi_staged
                              ? "staged: MPI is not CUDA-aware, each call copies through "
                                "pinned host buffers (timed)"
                              : "on the GPU buffers (CUDA-aware MPI)"));
  const bool wants_nccl = std::any_of(impls.begin(), impls.end(), [&](const Impl& impl) {
    return impl.source == Source::kNccl && selected(options, impl);
  });
  if (!wants_nccl) return true;
#ifdef TCA_HARNESS_NCCL
  // NCCL that is missing or refuses the job (two ranks on one GPU) only skips its rows.
  context->nccl = std::make_unique<tca_harness::Nccl>();
  context->nccl_missing = context->nccl->open();
  if (!context->nccl_missing.empty()) {
    context->nccl.reset();
    return true;
  }
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  output.table.comment(tca_harness::format(
      "ref.nccl: NCCL %s, N calls back to back then one synchronization; "
      "ref.nccl_graph: N calls in one CUDA graph; ref.nccl_sync: a synchronization per "
      "call; NCCL_NVLS_ENABLE=%s",
      context->nccl->version().c_str(), nvls != nullptr ? nvls : "(unset)"));
#else
  context->nccl_missing = "built without nccl.h";
#endif
  return true;
}
#endif

// ref.mpi's communicator where MPI runs (`missing` is ""), else the reason it is skipped. Either
// way the report says it: "mpi_reference": {"runs": ..., "reason": ...}.
void open_mpi(const std::string& missing, Context* context, Output* output) {
  context->mpi_missing = missing;
#ifdef TCA_BENCH_MPI
  if (missing.empty()) MPI_Comm_dup(MPI_COMM_WORLD, &context->comm);
#endif
  nlohmann::ordered_json field = {{"runs", missing.empty()}};
  if (!missing.empty()) field["reason"] = missing;
  output->report.set("mpi_reference", field);
}

void close_mpi(Context* context) {
#ifdef TCA_BENCH_MPI
  if (context->comm != MPI_COMM_NULL) MPI_Comm_free(&context->comm);
#endif
  (void)context;
}

// The comment lines before the table: time, tca.auto's choices over the run's sizes.
void print_head(const Options& options, const Output& output, tcaMemKind memory,
                const std::vector<tcaCollKind>& kinds) {
  output.table.comment(tca_harness::format(
      "time: slowest rank's mean per call, median of %d batches%s", options.batches,
      options.check_every_iteration ? "; -c 1: every iteration checked" : ""));
  for (tcaCollKind kind : kinds)
    print_auto_table(options, output, kind, memory,
                     kind == TCA_COLL_ALLREDUCE ? "allreduce" : "allgather");
  output.table.header();
  output.table.units();
  if (memory == TCA_MEM_GPU)
    output.table.comment(
        "notes: tca protocol x channels (tcaCollGetProtocol); ref.mpi staged "
        "through host memory, or on the device buffers");
}

// Every selected implementation at every size; returns the wrong elements of all rows.
size_t run_all(const Options& options, const std::vector<tcaCollKind>& kinds,
               const std::vector<Impl>& impls, const Buffers& buffers, const Context& context,
               Output* output) {
  const tcaDataType type = kTypeNames.at(options.type);
  const tcaRedOp op = kOpNames.at(options.op);
  const size_t element = tcaDataTypeSize(type);
  size_t total_wrong = 0;
  for (tcaCollKind kind : kinds) {
    for (const Impl& impl : impls) {
      if (!selected(options, impl)) continue;
      if (const std::string reason = skip_reason(impl, context); !reason.empty()) {
        tca_harness::skip_note(output->table, output->report, impl.name + ": skipped, " + reason);
        continue;
      }
      for (size_t bytes : sizes(options)) {
        const size_t per_rank = kind == TCA_COLL_ALLGATHER ? bytes / g_ranks : bytes;
        const Shape shape{kind, type, op, per_rank / element};
        if (shape.count == 0 || shape.count > INT_MAX) continue;
        const Row row = measure(impl, shape, buffers, options, context);
        report_row(output, row);
        total_wrong += row.wrong;
      }
    }
  }
  return total_wrong;
}

// One pair of buffers for every size: send holds the largest contribution, recv the result.
Buffers allocate_buffers(const Options& options, tcaMemKind memory,
                         std::vector<unsigned char>* host_copy) {
  Buffers buffers;
  buffers.memory = memory;
  const size_t largest = sizes(options).back();
  check(tcaMalloc(&buffers.send, largest, memory), "tcaMalloc");
  check(tcaMalloc(&buffers.recv, largest, memory), "tcaMalloc");
  host_copy->resize(memory == TCA_MEM_GPU ? largest : 0);
  buffers.host = host_copy->data();
  return buffers;
}

// Starts tca; the ranks and the transport to the next rank head the table.
void start_tca(const Options& options) {
  tcaConfig config{options.transport.c_str(), 0};
  check(tcaInitWithConfig(&config), "tcaInitWithConfig");
  g_rank = tca_harness::job_rank();
  g_ranks = tca_harness::job_size();
}

}  // namespace

int main(int argc, char** argv) {
  // MPI only for ref.mpi, and only where an MPI launcher started the job (before tcaInit).
  const std::string mpi_missing = tca_harness::start_reference_mpi(&argc, &argv);
  tca_harness::set_program_name("tca-coll");

  std::vector<std::string> impl_names;
  for (const Impl& impl : all_impls(TCA_MEM_GPU)) impl_names.push_back(impl.name);
  tca_harness::Cli cli{
      "tca-coll: allreduce and allgather of every tca algorithm next to MPI (and NCCL on GPU "
      "memory) (run: tca-run -n N tca-coll, or mpirun -n N tca-coll)"};
  Options options;
  add_options(cli, options, impl_names);
  if (const std::optional<int> code =
          cli.parse(argc, argv, tca_harness::launch_rank(), [&] { validate(options); })) {
    tca_harness::finish_reference_mpi();
    return *code;
  }

  start_tca(options);
  const tcaMemKind memory = options.memory == "gpu" ? TCA_MEM_GPU : TCA_MEM_CPU;
  std::vector<tcaCollKind> kinds;
  if (options.collective != "allgather") kinds.push_back(TCA_COLL_ALLREDUCE);
  if (options.collective != "allreduce") kinds.push_back(TCA_COLL_ALLGATHER);
  const std::vector<Impl> impls = all_impls(memory);

  const char* transport = "self";
  if (g_ranks > 1) check(tcaPeerTransport((g_rank + 1) % g_ranks, &transport), "tcaPeerTransport");
  Output output(options, g_rank);
  const char* bootstrap = "?";
  check(tcaBootstrapInfo(&bootstrap, nullptr), "tcaBootstrapInfo");
  output.table.comment(tca_harness::format(
      "tca-coll %d.%d: %d ranks, tca transport %s (to the next rank), bootstrap %s",
      TCA_VERSION_MAJOR, TCA_VERSION_MINOR, g_ranks, transport, bootstrap));
  output.report.set("bootstrap", bootstrap);
  Context context;
  open_mpi(mpi_missing, &context, &output);
#ifdef TCA_HARNESS_CUDA
  if (memory == TCA_MEM_GPU && !open_gpu(options, output, impls, &context)) {
    close_mpi(&context);
    check(tcaFinalize(), "tcaFinalize");
    tca_harness::finish_reference_mpi();
    return 1;
  }
#endif

  std::vector<unsigned char> host_copy;
  const Buffers buffers = allocate_buffers(options, memory, &host_copy);
  print_head(options, output, memory, kinds);
  const size_t total_wrong = run_all(options, kinds, impls, buffers, context, &output);
  if (options.json) output.report.print();

  tca_harness::barrier();
#ifdef TCA_HARNESS_NCCL
  context.nccl.reset();
#endif
  check(tcaFree(buffers.send), "tcaFree");
  check(tcaFree(buffers.recv), "tcaFree");
  close_mpi(&context);
  check(tcaFinalize(), "tcaFinalize");
  tca_harness::finish_reference_mpi();
  return total_wrong == 0 ? 0 : 2;
}
