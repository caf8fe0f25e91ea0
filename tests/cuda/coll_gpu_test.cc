// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// GPU collectives (config.memory = TCA_MEM_GPU) on the device, byte-exact against the host
// reference of the CPU suite (coll/coll_reference.h): every algorithm x type x reduction x
// placement x count; both protocols at several channel counts; the forms (host-called,
// stream-ordered, CUDA-graph replay, device-initiated from a user kernel) alone and mixed on
// one object; two objects alternating and in flight together; and the errors. Receive buffers
// are poisoned before every iteration. Every case skips unless every rank has a GPU that
// reaches every other rank's GPU, so a machine without one (CI) passes.
#include <tca/tca_coll.h>
#include <tca/tca_coll_cuda.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "coll_gpu_kernels.h"
#include "coll_reference.h"
#include "gpu_kernels.h"
#include "gpu_test_util.h"

namespace tca_test {
namespace {

constexpr size_t kLargeCount = size_t{1} << 20;
// None, one, odd (fewer than ranks or channels), pages but no power of two, and large.
constexpr size_t kCounts[] = {0, 1, 3, 7, 1000, 4099, kLargeCount};
constexpr int kSweepIterations = 2;  // the second runs on the other scratch parity
constexpr double kPollSeconds = 20;

CollCase gpu_case(tcaCollAlgorithm algorithm, tcaCollKind kind, tcaDataType type, tcaRedOp op,
                  size_t count, bool in_place) {
  CollCase c;
  c.kind = kind;
  c.type = type;
  c.op = op;
  c.count = count;
  c.in_place = in_place;
  c.config.algorithm = algorithm;
  c.config.memory = TCA_MEM_GPU;
  return c;
}

// Pinned host memory, so that copies on a stream run asynchronously.
class PinnedBytes {
 public:
  explicit PinnedBytes(size_t bytes) {
    EXPECT_CUDA_OK(cudaMallocHost(reinterpret_cast<void**>(&data_), std::max<size_t>(bytes, 1)));
  }
  ~PinnedBytes() { cudaFreeHost(data_); }
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;
  unsigned char* data() const { return data_; }

 private:
  unsigned char* data_ = nullptr;
};

// A case's sendbuf and recvbuf, `offset` bytes into GPU regions that hold the largest case of
// a test. The host prepares an iteration by uploading one image: this rank's contribution
// (recvbuf poisoned besides), or in place the whole recvbuf as recv_image_before says.
class CaseBuffers {
 public:
  CaseBuffers(const CollCase& c, KindRegion& send, KindRegion& recv, size_t offset = 0)
      : c_(c),
        send_(send),
        recv_(recv),
        offset_(offset),
        rank_(world_rank()),
        ranks_(world_size()) {
    EXPECT_LE(offset + c.recv_bytes(ranks_), recv.size()) << "test bug: region too small";
    EXPECT_LE(offset + c.send_bytes(), send.size()) << "test bug: region too small";
  }

  const CollCase& shape() const { return c_; }
  unsigned char* recvbuf() const { return recv_.data() + offset_; }
  unsigned char* sendbuf() const {
    return c_.in_place ? recvbuf() + c_.in_place_offset(rank_) : send_.data() + offset_;
  }
  size_t recv_bytes() const { return c_.recv_bytes(ranks_); }
  size_t upload_bytes() const { return c_.in_place ? recv_bytes() : c_.send_bytes(); }
  std::vector<unsigned char> upload_image(int round) const {
    return c_.in_place ? recv_image_before(c_, rank_, ranks_, round) : send_image(c_, rank_, round);
  }

  tcaResult make(tcaColl* coll) const {
    return tcaCollNew(coll, c_.kind, c_.type, c_.op, c_.count, sendbuf(), recvbuf(), &c_.config);
  }

  // Synchronous: the buffers hold iteration `round`'s input when it returns.
  ::testing::AssertionResult prepare(int round) {
    const std::vector<unsigned char> image = upload_image(round);
    if (c_.in_place) return recv_.write(offset_, image.data(), image.size());
    const ::testing::AssertionResult poisoned = recv_.poison_range(offset_, offset_ + recv_bytes());
    if (!poisoned) return poisoned;
    return send_.write(offset_, image.data(), image.size());
  }
  // The same on `stream`, from pinned `input` holding upload_image().
  ::testing::AssertionResult enqueue_upload(const unsigned char* input, cudaStream_t stream) {
    if (!c_.in_place) {
      const cudaError_t poisoned = cudaMemsetAsync(recvbuf(), kPoison, recv_bytes(), stream);
      if (poisoned != cudaSuccess) return cuda_succeeded(poisoned, "cudaMemsetAsync(recvbuf)");
    }
    return cuda_succeeded(cudaMemcpyAsync(c_.in_place ? recvbuf() : sendbuf(), input,
                                          upload_bytes(), cudaMemcpyHostToDevice, stream),
                          "cudaMemcpyAsync(upload)");
  }
  ::testing::AssertionResult enqueue_download(unsigned char* output, cudaStream_t stream) const {
    return cuda_succeeded(
        cudaMemcpyAsync(output, recvbuf(), recv_bytes(), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync(download)");
  }

  // recvbuf holds the result of iteration `round`.
  ::testing::AssertionResult check(int round) const {
    std::vector<unsigned char> landed(recv_bytes());
    const ::testing::AssertionResult copied = recv_.read(offset_, landed.data(), landed.size());
    if (!copied) return copied;
    return holds_result(c_, ranks_, round, landed.data());
  }

 private:
  CollCase c_;
  KindRegion& send_;
  KindRegion& recv_;
  size_t offset_;
  int rank_;
  int ranks_;
};

// One host-called iteration: prepared, started, finished by tcaCollWait or by polling
// tcaCollTest, checked.
void host_iteration(tcaColl coll, CaseBuffers& buffers, int round, bool poll) {
  SCOPED_TRACE(::testing::Message()
               << "host-called iteration " << round << (poll ? " (polled)" : ""));
  ASSERT_TRUE(buffers.prepare(round));
  ASSERT_TCA_OK(tcaCollStart(coll));
  if (poll) {
    int done = 0;
    const double start = now_seconds();
    while (!done && seconds_since(start) < kPollSeconds) ASSERT_TCA_OK(tcaCollTest(coll, &done));
    ASSERT_EQ(done, 1) << "tcaCollTest did not report the end in " << kPollSeconds << " s";
  } else {
    ASSERT_TCA_OK(tcaCollWait(coll));
  }
  ASSERT_TRUE(buffers.check(round));
}

// Runs a whole case host-called: made, `iterations` iterations, freed.
void run_host_called(const CollCase& c, KindRegion& send, KindRegion& recv, int iterations,
                     size_t offset = 0) {
  SCOPED_TRACE(c.describe() + " at offset " + std::to_string(offset));
  CaseBuffers buffers(c, send, recv, offset);
  tcaColl coll = nullptr;
  ASSERT_TCA_OK(buffers.make(&coll));
  for (int round = 0; round < iterations; ++round)
    ASSERT_NO_FATAL_FAILURE(host_iteration(coll, buffers, round, false));
  ASSERT_TCA_OK(tcaCollFree(coll));
}

// Where a device-initiated iteration runs: the collective's blocks and one more, which must
// return at once, with at least the threads the collective asks for.
struct DeviceLaunch {
  tcaDeviceColl handle = nullptr;
  int blocks = 0;
  int threads = 0;
};

void device_launch(tcaColl coll, int threads, DeviceLaunch* launch) {
  int min_threads = 0;
  ASSERT_TCA_OK(tcaCollDeviceHandle(coll, &launch->handle, &launch->blocks, &min_threads));
  ASSERT_NE(launch->handle, nullptr);
  ASSERT_GE(launch->blocks, 1);
  ASSERT_GE(min_threads, 1);
  int ll = 0;
  int channels = 0;
  ASSERT_TCA_OK(tcaCollGetProtocol(coll, &ll, &channels));
  EXPECT_EQ(launch->blocks, channels) << "a block runs a channel";
  launch->threads = std::max(threads, min_threads);
}

// `iterations` iterations of the collective in one user kernel; the data was prepared.
void device_iterations(const DeviceLaunch& launch, int iterations, cudaStream_t stream) {
  DeviceCounters error(1);
  ASSERT_CUDA_OK(run_device_collective(launch.handle, launch.blocks + 1, launch.threads, iterations,
                                       error.at(0), stream));
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_EQ(read_counter(error.at(0)), 0u) << "tcaDeviceCollRun's result";
}

// ---- fixtures ----

class CollGpuTest : public GpuTest {
 protected:
  // Collectives talk to every rank, not only to ring neighbours.
  std::vector<int> needed_peers() const override {
    std::vector<int> every(size_);
    std::iota(every.begin(), every.end(), 0);
    return every;
  }
};

class CollGpuAlgorithmTest : public CollGpuTest,
                             public ::testing::WithParamInterface<tcaCollAlgorithm> {
 protected:
  CollCase make_case(tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
                     bool in_place) const {
    return gpu_case(GetParam(), kind, type, op, count, in_place);
  }
};

INSTANTIATE_TEST_SUITE_P(CollGpu, CollGpuAlgorithmTest, ::testing::ValuesIn(kCollAlgorithms),
                         algorithm_param_name);

// ---- every type, reduction, placement and count, host-called ----

// One test per algorithm and type, so that each stays short and a failure names both.
class CollGpuSweepTest
    : public CollGpuTest,
      public ::testing::WithParamInterface<std::tuple<tcaCollAlgorithm, tcaDataType>> {
 protected:
  CollCase make_case(tcaCollKind kind, tcaRedOp op, size_t count, bool in_place) const {
    return gpu_case(std::get<0>(GetParam()), kind, std::get<1>(GetParam()), op, count, in_place);
  }
};

INSTANTIATE_TEST_SUITE_P(
    CollGpu, CollGpuSweepTest,
    ::testing::Combine(::testing::ValuesIn(kCollAlgorithms), ::testing::ValuesIn(kCollTypes)),
    [](const ::testing::TestParamInfo<std::tuple<tcaCollAlgorithm, tcaDataType>>& info) {
      return std::string(tcaCollAlgorithmName(std::get<0>(info.param))) + "_" +
             type_name(std::get<1>(info.param));
    });

TEST_P(CollGpuSweepTest, AllreduceEveryReductionPlacementAndCount) {
  KindRegion send(kLargeCount * sizeof(double), TCA_MEM_GPU);
  KindRegion recv(kLargeCount * sizeof(double), TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (tcaRedOp op : kCollOps)
    for (bool in_place : {false, true})
      for (size_t count : kCounts)
        ASSERT_NO_FATAL_FAILURE(run_host_called(make_case(TCA_COLL_ALLREDUCE, op, count, in_place),
                                                send, recv, kSweepIterations));
}

TEST_P(CollGpuSweepTest, AllgatherEveryPlacementAndCount) {
  KindRegion send(kLargeCount * sizeof(double), TCA_MEM_GPU);
  KindRegion recv(kLargeCount * sizeof(double) * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (bool in_place : {false, true})
    for (size_t count : kCounts)
      ASSERT_NO_FATAL_FAILURE(run_host_called(
          make_case(TCA_COLL_ALLGATHER, TCA_SUM, count, in_place), send, recv, kSweepIterations));
}

// Buffers need only their elements' alignment: the offsets here are no multiple of 16.
TEST_P(CollGpuAlgorithmTest, BuffersAlignedOnlyToTheirElements) {
  KindRegion send(64 * kKiB, TCA_MEM_GPU);
  KindRegion recv(64 * kKiB * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (tcaCollKind kind : {TCA_COLL_ALLREDUCE, TCA_COLL_ALLGATHER})
    for (tcaDataType type : {TCA_INT32, TCA_DOUBLE})
      for (size_t count : {size_t{7}, size_t{4099}})
        for (size_t elements : {1, 3})
          ASSERT_NO_FATAL_FAILURE(run_host_called(make_case(kind, type, TCA_MAX, count, false),
                                                  send, recv, kSweepIterations,
                                                  elements * tcaDataTypeSize(type)));
}

// ---- protocols and channels (environment, read at tcaCollNew) ----

TEST_P(CollGpuAlgorithmTest, EveryProtocolAndChannelCount) {
  constexpr size_t kMaxCount = 70000;
  KindRegion send(kMaxCount * sizeof(double), TCA_MEM_GPU);
  KindRegion recv(kMaxCount * sizeof(double) * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (const char* protocol : {"ll", "simple"}) {
    for (int channels : {1, 2, 5}) {
      SCOPED_TRACE(::testing::Message()
                   << "TCA_COLL_PROTOCOL=" << protocol << " TCA_COLL_CHANNELS=" << channels);
      ScopedEnvironment protocol_env("TCA_COLL_PROTOCOL", protocol);  // every rank alike
      ScopedEnvironment channels_env("TCA_COLL_CHANNELS", std::to_string(channels));
      for (const CollCase& shape : {make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 0, false),
                                    make_case(TCA_COLL_ALLGATHER, TCA_INT64, TCA_SUM, 0, true)}) {
        for (size_t count : {size_t{3}, size_t{4099}, kMaxCount}) {
          CollCase c = shape;
          c.count = count;
          SCOPED_TRACE(c.describe());
          CaseBuffers buffers(c, send, recv);
          tcaColl coll = nullptr;
          ASSERT_TCA_OK(buffers.make(&coll));
          int ll = -1;
          int used = 0;
          ASSERT_TCA_OK(tcaCollGetProtocol(coll, &ll, &used));
          EXPECT_EQ(ll, std::string(protocol) == "ll" ? 1 : 0);
          // At most one channel per element.
          EXPECT_EQ(static_cast<size_t>(used), std::min<size_t>(channels, count));
          for (int round = 0; round < kSweepIterations; ++round)
            ASSERT_NO_FATAL_FAILURE(host_iteration(coll, buffers, round, false));
          ASSERT_TCA_OK(tcaCollFree(coll));
        }
      }
    }
  }
}

// ---- the forms, one at a time ----

TEST_P(CollGpuAlgorithmTest, HostCalledIterationsWithNewData) {
  KindRegion send(kLargeCount * sizeof(float), TCA_MEM_GPU);
  KindRegion recv(kLargeCount * sizeof(float) * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (size_t count : {size_t{1}, size_t{4099}, kLargeCount}) {
    for (const CollCase& c : {make_case(TCA_COLL_ALLREDUCE, TCA_INT32, TCA_MIN, count, false),
                              make_case(TCA_COLL_ALLGATHER, TCA_FLOAT, TCA_SUM, count, true)}) {
      SCOPED_TRACE(c.describe());
      CaseBuffers buffers(c, send, recv);
      tcaColl coll = nullptr;
      ASSERT_TCA_OK(buffers.make(&coll));
      for (int round = 0; round < 6; ++round)
        ASSERT_NO_FATAL_FAILURE(host_iteration(coll, buffers, round, round % 2 == 1));
      ASSERT_TCA_OK(tcaCollFree(coll));
    }
  }
}

// Pinned input and output of one stream-ordered iteration.
struct StreamRound {
  StreamRound(const CaseBuffers& buffers, int round)
      : round(round), input(buffers.upload_bytes()), output(buffers.recv_bytes()) {}
  int round;
  PinnedBytes input;
  PinnedBytes output;
};
using StreamRounds = std::vector<std::unique_ptr<StreamRound>>;

StreamRounds stream_rounds(const CaseBuffers& buffers, int first, int n) {
  StreamRounds rounds;
  for (int round = first; round < first + n; ++round)
    rounds.emplace_back(new StreamRound(buffers, round));
  return rounds;
}

// Enqueues `r` on `stream`: the upload from its input, tcaCollStartStream and the download
// into its output; nothing waits on the host.
void enqueue_round(tcaColl coll, CaseBuffers& buffers, StreamRound& r, cudaStream_t stream) {
  const std::vector<unsigned char> image = buffers.upload_image(r.round);
  std::memcpy(r.input.data(), image.data(), image.size());
  ASSERT_TRUE(buffers.enqueue_upload(r.input.data(), stream));
  ASSERT_TCA_OK(tcaCollStartStream(coll, stream));
  ASSERT_TRUE(buffers.enqueue_download(r.output.data(), stream));
}

void check_rounds(const CaseBuffers& buffers, const StreamRounds& rounds) {
  for (const auto& r : rounds)
    EXPECT_TRUE(holds_result(buffers.shape(), world_size(), r->round, r->output.data()))
        << "stream-ordered iteration " << r->round;
}

TEST_P(CollGpuAlgorithmTest, StreamOrderedIterationsOnOneStream) {
  constexpr int kRounds = 5;
  KindRegion send(kLargeCount * sizeof(double), TCA_MEM_GPU);
  KindRegion recv(kLargeCount * sizeof(double) * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (const CollCase& c :
       {make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4099, false),
        make_case(TCA_COLL_ALLREDUCE, TCA_INT32, TCA_MAX, 1000, true),
        make_case(TCA_COLL_ALLGATHER, TCA_DOUBLE, TCA_SUM, 7, true),
        make_case(TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, kLargeCount / 4, false)}) {
    SCOPED_TRACE(c.describe());
    CaseBuffers buffers(c, send, recv);
    StreamRounds rounds = stream_rounds(buffers, 0, kRounds);
    tcaColl coll = nullptr;
    ASSERT_TCA_OK(buffers.make(&coll));
    Stream stream;
    for (auto& r : rounds) ASSERT_NO_FATAL_FAILURE(enqueue_round(coll, buffers, *r, stream.get()));
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
    check_rounds(buffers, rounds);
    ASSERT_TCA_OK(tcaCollFree(coll));
  }
}

// K iterations captured in one graph, replayed R times: a kernel writes each iteration's data
// (the round lives in device memory and advances in the graph), another checks each result.
// Afterwards a host-called iteration must still line up with the peers: the replays counted.
TEST_P(CollGpuAlgorithmTest, GraphReplaysRunOneIterationEach) {
  constexpr int kCaptured = 3;
  constexpr int kReplays = 4;
  constexpr int kRounds = kCaptured * kReplays;
  constexpr size_t kMaxCount = 256 * kKiB;
  KindRegion send(kMaxCount * sizeof(double), TCA_MEM_GPU);
  KindRegion recv(kMaxCount * sizeof(double) * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (const CollCase& c : {make_case(TCA_COLL_ALLREDUCE, TCA_FLOAT, TCA_SUM, 3, false),
                            make_case(TCA_COLL_ALLGATHER, TCA_INT64, TCA_SUM, 4099, true),
                            make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_MAX, kMaxCount, true)}) {
    SCOPED_TRACE(c.describe());
    CaseBuffers buffers(c, send, recv);
    tcaColl coll = nullptr;
    ASSERT_TCA_OK(buffers.make(&coll));
    DeviceCounters counters(2);  // [0] the round, [1] wrong elements over all rounds
    auto* wrong = reinterpret_cast<unsigned long long*>(counters.at(1));
    Stream stream;
    const auto capture_iteration = [&]() -> ::testing::AssertionResult {
      cudaStream_t on = stream.get();
      cudaError_t error = cudaMemsetAsync(buffers.recvbuf(), kPoison, buffers.recv_bytes(), on);
      if (error != cudaSuccess) return cuda_succeeded(error, "cudaMemsetAsync(recvbuf)");
      error = fill_contribution(buffers.sendbuf(), c.type, c.count, rank_, counters.at(0), on);
      if (error != cudaSuccess) return cuda_succeeded(error, "fill_contribution");
      const tcaResult started = tcaCollStartStream(coll, on);
      if (started != TCA_SUCCESS) return succeeded(started, "tcaCollStartStream");
      error = count_result_mismatches(buffers.recvbuf(), c.kind, c.type, c.op, c.count, size_,
                                      counters.at(0), wrong, on);
      if (error != cudaSuccess) return cuda_succeeded(error, "count_result_mismatches");
      return cuda_succeeded(advance_round(counters.at(0), on), "advance_round");
    };
    cudaGraph_t graph = nullptr;
    ASSERT_CUDA_OK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    ::testing::AssertionResult recorded = ::testing::AssertionSuccess();
    for (int i = 0; i < kCaptured && recorded; ++i) recorded = capture_iteration();
    ASSERT_CUDA_OK(cudaStreamEndCapture(stream.get(), &graph));
    ASSERT_TRUE(recorded);
    cudaGraphExec_t exec = nullptr;
    ASSERT_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < kReplays; ++replay)
      ASSERT_CUDA_OK(cudaGraphLaunch(exec, stream.get()));
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    EXPECT_EQ(read_counter(counters.at(0)), static_cast<uint64_t>(kRounds));
    EXPECT_EQ(read_counter(counters.at(1)), 0u) << "wrong elements over all replayed iterations";
    EXPECT_TRUE(buffers.check(kRounds - 1)) << "the last replayed iteration, on the host";
    ASSERT_NO_FATAL_FAILURE(host_iteration(coll, buffers, kRounds, false));
    ASSERT_TCA_OK(tcaCollFree(coll));
  }
}

// A user kernel runs the iterations (tcaDeviceCollRun) with the fewest threads allowed and
// one block more than the collective's; then one kernel runs several in a row.
TEST_P(CollGpuAlgorithmTest, DeviceInitiatedFromAUserKernel) {
  constexpr int kRounds = 4;
  KindRegion send(kLargeCount * sizeof(int64_t), TCA_MEM_GPU);
  KindRegion recv(kLargeCount * sizeof(int64_t) * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (const CollCase& c :
       {make_case(TCA_COLL_ALLREDUCE, TCA_INT64, TCA_SUM, 1, false),
        make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_MIN, 4099, true),
        make_case(TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, kLargeCount / 8, false)}) {
    SCOPED_TRACE(c.describe());
    CaseBuffers buffers(c, send, recv);
    tcaColl coll = nullptr;
    ASSERT_TCA_OK(buffers.make(&coll));
    DeviceLaunch launch;
    ASSERT_NO_FATAL_FAILURE(device_launch(coll, 1, &launch));
    Stream stream;
    for (int round = 0; round < kRounds; ++round) {
      SCOPED_TRACE(::testing::Message() << "device-initiated iteration " << round);
      ASSERT_TRUE(buffers.prepare(round));
      ASSERT_NO_FATAL_FAILURE(device_iterations(launch, 1, stream.get()));
      ASSERT_TRUE(buffers.check(round));
    }
    // Iterations of unchanged data: the result stays that of the data (in place, a sum would
    // reduce the results again, so only out of place or max / min).
    if (!c.in_place || c.op != TCA_SUM) {
      SCOPED_TRACE("three iterations in one kernel");
      ASSERT_TRUE(buffers.prepare(kRounds));
      ASSERT_NO_FATAL_FAILURE(device_iterations(launch, 3, stream.get()));
      ASSERT_TRUE(buffers.check(kRounds));
    }
    ASSERT_NO_FATAL_FAILURE(host_iteration(coll, buffers, kRounds + 1, false));
    ASSERT_TCA_OK(tcaCollFree(coll));
  }
}

// ---- forms mixed on one object; two objects ----

enum class Form { kHostWait, kHostTest, kStream, kGraph, kDevice };

const char* form_name(Form form) {
  switch (form) {
    case Form::kHostWait:
      return "host-called (wait)";
    case Form::kHostTest:
      return "host-called (test)";
    case Form::kStream:
      return "stream-ordered";
    case Form::kGraph:
      return "graph replay";
    case Form::kDevice:
      return "device-initiated";
  }
  return "?";
}

// Runs single iterations of one collective in any form, each with its own round's data, and
// checks each. The graph holds one iteration (upload from pinned memory, the collective) and
// is captured at its first use.
class FormRunner {
 public:
  FormRunner(tcaColl coll, CaseBuffers& buffers)
      : coll_(coll), buffers_(buffers), input_(buffers.upload_bytes()) {}
  ~FormRunner() {
    if (graph_ != nullptr) cudaGraphExecDestroy(graph_);
  }
  FormRunner(const FormRunner&) = delete;
  FormRunner& operator=(const FormRunner&) = delete;

  void run(Form form, int round) {
    SCOPED_TRACE(::testing::Message() << form_name(form) << " iteration " << round);
    if (form == Form::kHostWait || form == Form::kHostTest) {
      ASSERT_NO_FATAL_FAILURE(host_iteration(coll_, buffers_, round, form == Form::kHostTest));
      return;
    }
    if (form == Form::kDevice) {
      if (launch_.handle == nullptr) {
        ASSERT_NO_FATAL_FAILURE(device_launch(coll_, 512, &launch_));
      }
      ASSERT_TRUE(buffers_.prepare(round));
      ASSERT_NO_FATAL_FAILURE(device_iterations(launch_, 1, stream_.get()));
      ASSERT_TRUE(buffers_.check(round));
      return;
    }
    const std::vector<unsigned char> image = buffers_.upload_image(round);
    std::memcpy(input_.data(), image.data(), image.size());
    if (form == Form::kStream) {
      ASSERT_TRUE(buffers_.enqueue_upload(input_.data(), stream_.get()));
      ASSERT_TCA_OK(tcaCollStartStream(coll_, stream_.get()));
    } else {
      if (graph_ == nullptr) {
        ASSERT_NO_FATAL_FAILURE(capture());
      }
      ASSERT_CUDA_OK(cudaGraphLaunch(graph_, stream_.get()));
    }
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream_.get()));
    ASSERT_TRUE(buffers_.check(round));
  }

 private:
  void capture() {
    cudaGraph_t graph = nullptr;
    ASSERT_CUDA_OK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
    ::testing::AssertionResult recorded = buffers_.enqueue_upload(input_.data(), stream_.get());
    if (recorded)
      recorded = succeeded(tcaCollStartStream(coll_, stream_.get()), "tcaCollStartStream");
    ASSERT_CUDA_OK(cudaStreamEndCapture(stream_.get(), &graph));
    ASSERT_TRUE(recorded);
    const cudaError_t instantiated = cudaGraphInstantiate(&graph_, graph, 0);
    cudaGraphDestroy(graph);
    ASSERT_CUDA_OK(instantiated);
  }

  tcaColl coll_;
  CaseBuffers& buffers_;
  PinnedBytes input_;
  Stream stream_;
  cudaGraphExec_t graph_ = nullptr;
  DeviceLaunch launch_;
};

TEST_P(CollGpuAlgorithmTest, FormsMixedOnOneObject) {
  const Form kOrder[] = {Form::kHostWait, Form::kStream,   Form::kDevice, Form::kGraph,
                         Form::kHostTest, Form::kGraph,    Form::kDevice, Form::kStream,
                         Form::kDevice,   Form::kHostWait, Form::kGraph,  Form::kHostTest};
  KindRegion send(64 * kKiB * sizeof(double), TCA_MEM_GPU);
  KindRegion recv(64 * kKiB * sizeof(double) * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (const CollCase& c : {make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4099, true),
                            make_case(TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, 1000, false),
                            make_case(TCA_COLL_ALLREDUCE, TCA_INT64, TCA_MAX, 64 * kKiB, false)}) {
    SCOPED_TRACE(c.describe());
    CaseBuffers buffers(c, send, recv);
    tcaColl coll = nullptr;
    ASSERT_TCA_OK(buffers.make(&coll));
    {
      FormRunner runner(coll, buffers);
      for (int round = 0; round < static_cast<int>(std::size(kOrder)); ++round)
        ASSERT_NO_FATAL_FAILURE(runner.run(kOrder[round], round));
    }
    ASSERT_TCA_OK(tcaCollFree(coll));
  }
}

// Host-called iterations served by the resident kernel (tcaCollConfig.resident_idle_us): back
// to back, after it has left for being idle (a new one), mixed with the other forms, and a
// device synchronization that ends once it has left. A collective of several channels takes
// launches instead and must work the same; so must TCA_COLL_RESIDENT_OFF (a launch per call;
// resident_idle_us = 0, elsewhere in the suite, takes TCA_COLL_RESIDENT_US, a resident kernel).
TEST_P(CollGpuAlgorithmTest, HostCalledByAResidentKernel) {
  constexpr unsigned kIdleUs = 300;
  const Form kOrder[] = {Form::kStream, Form::kHostWait, Form::kDevice,  Form::kHostTest,
                         Form::kGraph,  Form::kHostWait, Form::kHostWait};
  KindRegion send(4099 * sizeof(double), TCA_MEM_GPU);
  KindRegion recv(4099 * sizeof(double) * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  for (CollCase c : {make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, false),
                     make_case(TCA_COLL_ALLREDUCE, TCA_INT32, TCA_MAX, 1000, true),
                     make_case(TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, 7, true),
                     make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_MIN, 4099, false),
                     make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 3, false)}) {
    const bool off = c.count == 3;
    c.config.resident_idle_us = off ? TCA_COLL_RESIDENT_OFF : kIdleUs;
    SCOPED_TRACE(c.describe() + (off ? " launched per call" : " resident"));
    CaseBuffers buffers(c, send, recv);
    tcaColl coll = nullptr;
    ASSERT_TCA_OK(buffers.make(&coll));
    int round = 0;
    for (; round < 6; ++round)
      ASSERT_NO_FATAL_FAILURE(host_iteration(coll, buffers, round, round % 2 == 1));
    // Returns once the kernel has been idle long enough to leave.
    ASSERT_CUDA_OK(cudaDeviceSynchronize());
    for (int last = round + 2; round < last; ++round)
      ASSERT_NO_FATAL_FAILURE(host_iteration(coll, buffers, round, false));
    {
      FormRunner runner(coll, buffers);
      for (const Form form : kOrder) ASSERT_NO_FATAL_FAILURE(runner.run(form, round++));
    }
    ASSERT_TCA_OK(tcaCollFree(coll));
  }
}

// A case on GPU buffers of its own.
struct OwnBuffers {
  OwnBuffers(const CollCase& c, int ranks)
      : send(c.send_bytes(), TCA_MEM_GPU),
        recv(c.recv_bytes(ranks), TCA_MEM_GPU),
        buffers(c, send, recv) {}
  bool ok() const { return send.ok() && recv.ok(); }
  KindRegion send;
  KindRegion recv;
  CaseBuffers buffers;
};

// Two objects of different shapes: alternating, both host-called iterations in flight, and
// stream-ordered iterations of both on two streams at once.
TEST_P(CollGpuAlgorithmTest, TwoObjectsAlternateAndOverlap) {
  constexpr int kRounds = 4;
  OwnBuffers a(make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4099, false), size_);
  OwnBuffers b(make_case(TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, 1000, true), size_);
  ASSERT_TRUE(a.ok() && b.ok());
  CaseBuffers& buffers_a = a.buffers;
  CaseBuffers& buffers_b = b.buffers;
  tcaColl coll_a = nullptr;
  tcaColl coll_b = nullptr;
  ASSERT_TCA_OK(buffers_a.make(&coll_a));
  ASSERT_TCA_OK(buffers_b.make(&coll_b));

  for (int round = 0; round < kRounds; ++round) {
    ASSERT_NO_FATAL_FAILURE(host_iteration(coll_a, buffers_a, round, false));
    ASSERT_NO_FATAL_FAILURE(host_iteration(coll_b, buffers_b, round, false));
  }
  {
    SCOPED_TRACE("both host-called iterations in flight");
    ASSERT_TRUE(buffers_a.prepare(kRounds));
    ASSERT_TRUE(buffers_b.prepare(kRounds));
    ASSERT_TCA_OK(tcaCollStart(coll_a));
    ASSERT_TCA_OK(tcaCollStart(coll_b));
    ASSERT_TCA_OK(tcaCollWait(coll_b));
    ASSERT_TCA_OK(tcaCollWait(coll_a));
    EXPECT_TRUE(buffers_a.check(kRounds));
    EXPECT_TRUE(buffers_b.check(kRounds));
  }
  {
    SCOPED_TRACE("stream-ordered on two streams");
    StreamRounds rounds_a = stream_rounds(buffers_a, kRounds + 1, kRounds);
    StreamRounds rounds_b = stream_rounds(buffers_b, kRounds + 1, kRounds);
    Stream stream_a;
    Stream stream_b;
    // Interleaved, so that both objects have iterations queued at once.
    for (int i = 0; i < kRounds; ++i) {
      ASSERT_NO_FATAL_FAILURE(enqueue_round(coll_a, buffers_a, *rounds_a[i], stream_a.get()));
      ASSERT_NO_FATAL_FAILURE(enqueue_round(coll_b, buffers_b, *rounds_b[i], stream_b.get()));
    }
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream_a.get()));
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream_b.get()));
    check_rounds(buffers_a, rounds_a);
    check_rounds(buffers_b, rounds_b);
  }
  ASSERT_TCA_OK(tcaCollFree(coll_a));
  ASSERT_TCA_OK(tcaCollFree(coll_b));
}

// A collective made while another's stream-ordered iteration waits for a peer on this rank's
// GPU: rank 0 enqueues A's iteration on a blocking stream, then makes B; the others make B
// first and only then enqueue their iteration of A. Making B must not wait for A's kernel
// (a device-wide or legacy-stream wait there would hold rank 0 until A's wait timed out).
TEST_P(CollGpuAlgorithmTest, MadeWhileAnotherWaitsForAPeerOnAStream) {
  OwnBuffers a(make_case(TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4099, false), size_);
  OwnBuffers b(make_case(TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, 1000, true), size_);
  ASSERT_TRUE(a.ok() && b.ok());
  CaseBuffers& buffers_a = a.buffers;
  CaseBuffers& buffers_b = b.buffers;
  tcaColl coll_a = nullptr;
  tcaColl coll_b = nullptr;
  ASSERT_TCA_OK(buffers_a.make(&coll_a));
  StreamRounds rounds = stream_rounds(buffers_a, 0, 1);
  Stream stream(cudaStreamDefault);
  if (rank_ == 0) {
    ASSERT_NO_FATAL_FAILURE(enqueue_round(coll_a, buffers_a, *rounds[0], stream.get()));
    ASSERT_TCA_OK(buffers_b.make(&coll_b));
  } else {
    ASSERT_TCA_OK(buffers_b.make(&coll_b));
    ASSERT_NO_FATAL_FAILURE(enqueue_round(coll_a, buffers_a, *rounds[0], stream.get()));
  }
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
  check_rounds(buffers_a, rounds);
  ASSERT_NO_FATAL_FAILURE(host_iteration(coll_b, buffers_b, 0, false));
  ASSERT_TCA_OK(tcaCollFree(coll_b));
  ASSERT_TCA_OK(tcaCollFree(coll_a));
}

// ---- errors ----

class CollGpuErrorTest : public CollGpuTest {};

// A buffer off its elements' alignment fails creation on every rank alike, and touches
// nothing: both buffers keep their bytes and a good collective runs afterwards.
TEST_F(CollGpuErrorTest, MisalignedBuffersAreRejectedAndChangeNothing) {
  KindRegion send(4096, TCA_MEM_GPU);
  KindRegion recv(4096 * size_, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  ASSERT_TRUE(send.fill_range(Pattern{rank_, 1}, 0, send.size()));
  ASSERT_TRUE(recv.poison_range(0, recv.size()));
  tcaCollConfig config{};
  config.memory = TCA_MEM_GPU;
  tcaColl coll = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4, send.data() + 4,
                              recv.data(), &config));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_INT64, TCA_MAX, 4, send.data(),
                              recv.data() + 1, &config));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, 9, send.data() + 2,
                              recv.data() + 2, &config));
  ExpectedImage sent(0, send.size());
  sent.apply(Copy::linear(0, 0, send.size()), Pattern{rank_, 1});
  EXPECT_TRUE(send.holds(sent));
  EXPECT_TRUE(recv.holds(ExpectedImage(0, recv.size())));
  ASSERT_NO_FATAL_FAILURE(run_host_called(
      gpu_case(TCA_COLL_AUTO, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4, false), send, recv, 1));
}

TEST_F(CollGpuErrorTest, BadArgumentsAreRejectedWithAMessage) {
  KindRegion send(4096, TCA_MEM_GPU);
  KindRegion recv(4096, TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  Stream stream;
  tcaCollConfig gpu{};
  gpu.memory = TCA_MEM_GPU;
  tcaColl coll = nullptr;
  // Host memory for a GPU collective, as either buffer.
  std::vector<double> host(4);
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4, host.data(),
                              recv.data(), &gpu));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4, send.data(),
                              host.data(), &gpu));
  // Environment values that are no protocol or channel count.
  const std::pair<const char*, const char*> kBadEnvironment[] = {{"TCA_COLL_PROTOCOL", "fast"},
                                                                 {"TCA_COLL_CHANNELS", "0"},
                                                                 {"TCA_COLL_CHANNELS", "two"},
                                                                 {"TCA_COLL_CHANNELS", "100000"}};
  for (const auto& [name, value] : kBadEnvironment) {
    SCOPED_TRACE(::testing::Message() << name << "=" << value);
    ScopedEnvironment env(name, value);
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                     tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4, send.data(),
                                recv.data(), &gpu));
  }
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStartStream(nullptr, stream.get()));
  tcaDeviceColl handle = nullptr;
  int blocks = 0;
  int threads = 0;
  int ll = 0;
  int channels = 0;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollDeviceHandle(nullptr, &handle, &blocks, &threads));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollGetProtocol(nullptr, &ll, &channels));

  ASSERT_TCA_OK(tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 4, send.data(),
                           recv.data(), &gpu));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollDeviceHandle(coll, nullptr, &blocks, &threads));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollDeviceHandle(coll, &handle, nullptr, &threads));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollGetProtocol(coll, nullptr, &channels));
  ASSERT_TCA_OK(tcaCollFree(coll));

  // The stream and device forms need GPU buffers.
  double a = 1;
  double b = 0;
  ASSERT_TCA_OK(tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, &a, &b, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStartStream(coll, stream.get()));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollDeviceHandle(coll, &handle, &blocks, &threads));
  ASSERT_TCA_OK(tcaCollFree(coll));
}

// Iterations of one object must not overlap, whatever their forms; a freed object is refused.
TEST_F(CollGpuErrorTest, MisorderedCallsAreRejected) {
  const CollCase c = gpu_case(TCA_COLL_AUTO, TCA_COLL_ALLREDUCE, TCA_INT32, TCA_SUM, 100, false);
  KindRegion send(c.send_bytes(), TCA_MEM_GPU);
  KindRegion recv(c.recv_bytes(size_), TCA_MEM_GPU);
  ASSERT_TRUE(send.ok() && recv.ok());
  CaseBuffers buffers(c, send, recv);
  tcaColl coll = nullptr;
  ASSERT_TCA_OK(buffers.make(&coll));
  Stream stream;
  tcaDeviceColl handle = nullptr;
  int blocks = 0;
  int threads = 0;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollWait(coll));  // not started
  ASSERT_TRUE(buffers.prepare(0));
  ASSERT_TCA_OK(tcaCollStart(coll));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStart(coll));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStartStream(coll, stream.get()));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollDeviceHandle(coll, &handle, &blocks, &threads));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollFree(coll));
  ASSERT_TCA_OK(tcaCollWait(coll));
  EXPECT_TRUE(buffers.check(0)) << "the refused calls changed the iteration";
  ASSERT_TCA_OK(tcaCollFree(coll));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStartStream(coll, stream.get()));
}

// Across hosts (TCA_HOST_ID splits the ranks; the fake-host run sets it) the host runs the
// schedule: host-called and stream-ordered iterations give the reference result, a kernel
// cannot run it.
TEST_F(CollGpuErrorTest, AcrossHostsTheHostRunsTheScheduleAndKernelsAreRefused) {
  if (std::getenv("TCA_HOST_ID") == nullptr || size_ < 2)
    GTEST_SKIP() << "runs with TCA_HOST_ID on 2 or more ranks";
  for (const tcaCollKind kind : {TCA_COLL_ALLREDUCE, TCA_COLL_ALLGATHER}) {
    const CollCase c = gpu_case(TCA_COLL_AUTO, kind, TCA_DOUBLE, TCA_SUM, 1000, false);
    KindRegion send(c.send_bytes(), TCA_MEM_GPU);
    KindRegion recv(c.recv_bytes(size_), TCA_MEM_GPU);
    ASSERT_TRUE(send.ok() && recv.ok());
    CaseBuffers buffers(c, send, recv);
    tcaColl coll = nullptr;
    ASSERT_TCA_OK(buffers.make(&coll));
    for (int iteration = 0; iteration < 3; ++iteration) {
      ASSERT_TRUE(buffers.prepare(iteration));
      ASSERT_TCA_OK(tcaCollStart(coll));
      ASSERT_TCA_OK(tcaCollWait(coll));
      EXPECT_TRUE(buffers.check(iteration)) << "host-called iteration " << iteration;
    }
    Stream stream;
    ASSERT_TRUE(buffers.prepare(3));
    ASSERT_TCA_OK(tcaCollStartStream(coll, stream.get()));
    ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(stream.get()));
    EXPECT_TRUE(buffers.check(3)) << "stream-ordered iteration";
    // The host's iteration cannot go into a graph: refused, the capture still valid.
    ASSERT_EQ(cudaSuccess, cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    EXPECT_TCA_ERROR(TCA_ERROR_UNSUPPORTED, tcaCollStartStream(coll, stream.get()));
    cudaGraph_t graph = nullptr;
    EXPECT_EQ(cudaSuccess, cudaStreamEndCapture(stream.get(), &graph));
    if (graph != nullptr) cudaGraphDestroy(graph);
    tcaDeviceColl handle = nullptr;
    int blocks = 0;
    int threads = 0;
    EXPECT_TCA_ERROR(TCA_ERROR_UNSUPPORTED, tcaCollDeviceHandle(coll, &handle, &blocks, &threads));
    ASSERT_TCA_OK(tcaCollFree(coll));
  }
}

// Zero elements: every form is an empty iteration, and there is no program for a kernel.
TEST_F(CollGpuErrorTest, ZeroElementsRunEmptyAndHaveNoProgram) {
  tcaCollConfig gpu{};
  gpu.memory = TCA_MEM_GPU;
  tcaColl coll = nullptr;
  ASSERT_TCA_OK(
      tcaCollNew(&coll, TCA_COLL_ALLGATHER, TCA_FLOAT, TCA_SUM, 0, nullptr, nullptr, &gpu));
  ASSERT_TCA_OK(tcaCollStart(coll));
  ASSERT_TCA_OK(tcaCollWait(coll));
  Stream stream;
  ASSERT_TCA_OK(tcaCollStartStream(coll, stream.get()));
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
  int ll = -1;
  int channels = -1;
  ASSERT_TCA_OK(tcaCollGetProtocol(coll, &ll, &channels));
  EXPECT_EQ(channels, 0);
  tcaDeviceColl handle = nullptr;
  int blocks = 0;
  int threads = 0;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollDeviceHandle(coll, &handle, &blocks, &threads));
  ASSERT_TCA_OK(tcaCollFree(coll));
}

}  // namespace
}  // namespace tca_test
