// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Collectives: every algorithm x type x reduction x placement on each CPU transport, run at
// every rank count ctest gives (1..8), with data that changes every iteration of a persistent
// object so that a sender overwriting data its receiver has not consumed yet is caught.
// Values are small integers in every type, so float sums are exact and results are compared
// exactly; receive buffers are poisoned before every iteration so unwritten bytes are caught.
#include <tca/tca_coll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "coll_reference.h"
#include "test_util.h"

namespace tca_test {
namespace {

// Fewer elements than ranks (empty ring chunks), odd, and a few pages.
constexpr size_t kCounts[] = {1, 3, 13, 1027};
constexpr int kIterations = 3;

// Host memory from tcaMalloc (mapped by same-host peers), or the user's own.
class Buffer {
 public:
  Buffer(size_t bytes, bool from_tca) : bytes_(std::max<size_t>(bytes, 1)), from_tca_(from_tca) {
    if (from_tca_) {
      void* ptr = nullptr;
      EXPECT_TCA_OK(tcaMalloc(&ptr, bytes_, TCA_MEM_CPU));
      data_ = static_cast<unsigned char*>(ptr);
    } else {
      own_.resize(bytes_);
      data_ = own_.data();
    }
  }
  ~Buffer() {
    if (from_tca_) {
      EXPECT_TCA_OK(tcaFree(data_));
    }
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  unsigned char* data() const { return data_; }

 private:
  size_t bytes_;
  bool from_tca_;
  std::vector<unsigned char> own_;
  unsigned char* data_ = nullptr;
};

// What one case runs: a persistent collective of one shape, iterated with fresh data.
struct Case : CollCase {
  bool tca_memory = true;
  int iterations = kIterations;
  int skew_every = 0;  // > 0: rank r sleeps before iteration i when (i + r) % skew_every == 0

  std::string describe() const { return CollCase::describe() + (tca_memory ? "" : " user memory"); }
};

// Runs `c` on every rank; failures name the case and the iteration.
void run_case(const Case& c) {
  SCOPED_TRACE(c.describe());
  const int rank = world_rank();
  const int ranks = world_size();
  const size_t recv_bytes = c.recv_bytes(ranks);
  Buffer recv(recv_bytes, c.tca_memory);
  Buffer send(c.send_bytes(), c.tca_memory);
  unsigned char* recvbuf = recv.data();
  unsigned char* sendbuf = c.in_place ? recvbuf + c.in_place_offset(rank) : send.data();

  tcaColl coll = nullptr;
  ASSERT_TCA_OK(tcaCollNew(&coll, c.kind, c.type, c.op, c.count, sendbuf, recvbuf, &c.config));
  for (int round = 0; round < c.iterations; ++round) {
    SCOPED_TRACE("iteration " + std::to_string(round));
    std::memset(recvbuf, kPoison, recv_bytes);
    const auto mine = send_image(c, rank, round);
    std::memcpy(sendbuf, mine.data(), mine.size());
    if (c.skew_every > 0 && (round + rank) % c.skew_every == 0) usleep(2000);
    ASSERT_TCA_OK(tcaCollStart(coll));
    ASSERT_TCA_OK(tcaCollWait(coll));
    ASSERT_TRUE(holds_result(c, ranks, round, recvbuf));
  }
  ASSERT_TCA_OK(tcaCollFree(coll));
}

// ---- the transport x algorithm cases ----

using Param = std::tuple<std::string, tcaCollAlgorithm>;

class CollTest : public ::testing::TestWithParam<Param> {
 protected:
  static constexpr int kTestTimeoutMs = 30000;

  void SetUp() override {
    const std::string& transport = std::get<0>(GetParam());
    tcaConfig config{transport.c_str(), kTestTimeoutMs};
    ASSERT_TCA_OK(tcaInitWithConfig(&config));
    initialized_ = true;
  }
  void TearDown() override {
    if (!initialized_) return;
    EXPECT_TCA_OK(tcaCollReleaseCache());
    EXPECT_TCA_OK(tcaFinalize());
  }

  tcaCollAlgorithm algorithm() const { return std::get<1>(GetParam()); }
  Case base(tcaCollKind kind) const {
    Case c;
    c.kind = kind;
    c.config.algorithm = algorithm();
    return c;
  }

  bool initialized_ = false;
};

TEST_P(CollTest, AllreduceEveryTypeReductionPlacementAndCount) {
  for (tcaDataType type : kCollTypes)
    for (tcaRedOp op : kCollOps)
      for (bool in_place : {false, true})
        for (size_t count : kCounts) {
          Case c = base(TCA_COLL_ALLREDUCE);
          c.type = type;
          c.op = op;
          c.in_place = in_place;
          c.count = count;
          ASSERT_NO_FATAL_FAILURE(run_case(c));
        }
}

TEST_P(CollTest, AllgatherEveryTypePlacementAndCount) {
  for (tcaDataType type : kCollTypes)
    for (bool in_place : {false, true})
      for (size_t count : kCounts) {
        Case c = base(TCA_COLL_ALLGATHER);
        c.type = type;
        c.in_place = in_place;
        c.count = count;
        ASSERT_NO_FATAL_FAILURE(run_case(c));
      }
}

// Many iterations with ranks arriving late in turn: a sender that runs ahead must not
// overwrite data its receiver has not consumed (scratch parity, credits).
TEST_P(CollTest, PersistentIterationsWithSkewedRanks) {
  for (tcaCollKind kind : {TCA_COLL_ALLREDUCE, TCA_COLL_ALLGATHER})
    for (size_t count : {size_t{2}, size_t{4099}}) {
      Case c = base(kind);
      c.count = count;
      c.iterations = 24;
      c.skew_every = 5;
      ASSERT_NO_FATAL_FAILURE(run_case(c));
    }
}

// Buffers that are not from tcaMalloc reach peers through the transport's other path.
TEST_P(CollTest, UserMemoryBuffers) {
  for (tcaCollKind kind : {TCA_COLL_ALLREDUCE, TCA_COLL_ALLGATHER}) {
    Case c = base(kind);
    c.count = 517;
    c.tca_memory = false;
    ASSERT_NO_FATAL_FAILURE(run_case(c));
  }
}

// Positions permuted by a topology: a ring, and a 2D torus when the rank count factors.
TEST_P(CollTest, RankToPositionMappings) {
  const int ranks = world_size();
  std::vector<tcaCollTopology> topologies = {{TCA_TOPOLOGY_RING, {0, 0}}};
  for (int width = 2; width < ranks; ++width)
    if (ranks % width == 0) topologies.push_back({TCA_TOPOLOGY_TORUS_2D, {width, ranks / width}});
  for (const tcaCollTopology& topology : topologies)
    for (tcaCollKind kind : {TCA_COLL_ALLREDUCE, TCA_COLL_ALLGATHER}) {
      Case c = base(kind);
      c.count = 7;
      c.config.topology = topology;
      ASSERT_NO_FATAL_FAILURE(run_case(c));
    }
}

TEST_P(CollTest, TestPollsAnIterationToItsEnd) {
  const int ranks = world_size();
  double mine = world_rank() + 1.0;
  double sum = 0;
  tcaColl coll = nullptr;
  tcaCollConfig config{};
  config.algorithm = algorithm();
  ASSERT_TCA_OK(
      tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, &mine, &sum, &config));
  for (int round = 0; round < 3; ++round) {
    ASSERT_TCA_OK(tcaCollStart(coll));
    int done = 0;
    // tcaTestDMARecvDesc does not drive the mpi transport's progress (only the blocking wait
    // does), so there polling alone may never finish.
    const bool polling_finishes = std::get<0>(GetParam()) == "shm";
    const double start = now_seconds();
    while (!done && seconds_since(start) < (polling_finishes ? 5.0 : 0.05))
      ASSERT_TCA_OK(tcaCollTest(coll, &done));
    if (polling_finishes) {
      EXPECT_EQ(done, 1) << "polling did not finish";
    }
    if (!done) {
      ASSERT_TCA_OK(tcaCollWait(coll));
    }
    EXPECT_EQ(sum, ranks * (ranks + 1) / 2.0);
  }
  ASSERT_TCA_OK(tcaCollFree(coll));
}

TEST_P(CollTest, OneShotCallsRepeatAndMixShapes) {
  const int rank = world_rank();
  const int ranks = world_size();
  tcaCollConfig config{};
  config.algorithm = algorithm();
  for (int round = 0; round < 3; ++round) {
    std::vector<int64_t> values(5);
    for (size_t i = 0; i < values.size(); ++i) values[i] = contribution(rank, i, round);
    std::vector<int64_t> sums(values.size());
    ASSERT_TCA_OK(
        tcaAllreduce(values.data(), sums.data(), values.size(), TCA_INT64, TCA_SUM, &config));
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(sums[i], reduced(TCA_SUM, ranks, i, round));
    // In place: the result replaces the contribution.
    ASSERT_TCA_OK(
        tcaAllreduce(values.data(), values.data(), values.size(), TCA_INT64, TCA_MAX, &config));
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(values[i], reduced(TCA_MAX, ranks, i, round));

    std::vector<float> gathered(3 * static_cast<size_t>(ranks), -1.0f);
    for (size_t i = 0; i < 3; ++i)
      gathered[rank * 3 + i] = static_cast<float>(contribution(rank, i, round));
    ASSERT_TCA_OK(tcaAllgather(&gathered[rank * 3], gathered.data(), 3, TCA_FLOAT, &config));
    for (int from = 0; from < ranks; ++from)
      for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(gathered[from * 3 + i], static_cast<float>(contribution(from, i, round)));
  }
}

TEST_P(CollTest, ZeroElementsIsANoOp) {
  tcaColl coll = nullptr;
  tcaCollConfig config{};
  config.algorithm = algorithm();
  ASSERT_TCA_OK(
      tcaCollNew(&coll, TCA_COLL_ALLGATHER, TCA_INT32, TCA_SUM, 0, nullptr, nullptr, &config));
  ASSERT_TCA_OK(tcaCollStart(coll));
  ASSERT_TCA_OK(tcaCollWait(coll));
  ASSERT_TCA_OK(tcaCollFree(coll));
  ASSERT_TCA_OK(tcaAllreduce(nullptr, nullptr, 0, TCA_DOUBLE, TCA_SUM, &config));
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param) + "_" + tcaCollAlgorithmName(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Coll, CollTest,
                         ::testing::Combine(::testing::Values("shm", "mpi"),
                                            ::testing::ValuesIn(kCollAlgorithms)),
                         param_name);

// ---- misuse, on the default transport ----

class CollErrorTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TCA_OK(tcaInit()); }
  void TearDown() override { EXPECT_TCA_OK(tcaFinalize()); }
};

TEST_F(CollErrorTest, BadArgumentsAreRejectedWithAMessage) {
  double a[4] = {};
  double b[4] = {};
  tcaColl coll = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(nullptr, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, a, b, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE,
                                                          TCA_SUM, 1, nullptr, b, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, static_cast<tcaDataType>(9), TCA_SUM, 1, a,
                              b, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, static_cast<tcaRedOp>(7), 1, a,
                              b, nullptr));
  // Overlapping, but not in place.
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE,
                                                          TCA_SUM, 2, a, a + 1, nullptr));
  tcaCollConfig config{};
  config.algorithm = static_cast<tcaCollAlgorithm>(7);  // unknown, yet in the enum's range
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, a, b, &config));
  config = tcaCollConfig{};
  config.topology = {TCA_TOPOLOGY_TORUS_2D, {world_size() + 1, 1}};
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, a, b, &config));
  config = tcaCollConfig{};
  config.resident_idle_us = 100;  // a resident kernel for host memory
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, a, b, &config));
  config.memory = TCA_MEM_GPU;
  config.resident_idle_us = 1000001;  // above the limit (checked before the memory)
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, a, b, &config));
  EXPECT_EQ(coll, nullptr);
  // "No resident kernel" is a valid word for host memory too.
  config = tcaCollConfig{};
  config.resident_idle_us = TCA_COLL_RESIDENT_OFF;
  ASSERT_TCA_OK(tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, a, b, &config));
  ASSERT_TCA_OK(tcaCollFree(coll));
  coll = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStart(nullptr));
}

TEST_F(CollErrorTest, MisorderedCallsAreRejected) {
  double a = 1;
  double b = 0;
  double c = 0;
  tcaColl first = nullptr;
  tcaColl second = nullptr;
  ASSERT_TCA_OK(tcaCollNew(&first, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, &a, &b, nullptr));
  ASSERT_TCA_OK(tcaCollNew(&second, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, &a, &c, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollWait(first));  // not started
  ASSERT_TCA_OK(tcaCollStart(first));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStart(first));   // running
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStart(second));  // another in flight
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollFree(first));    // running
  ASSERT_TCA_OK(tcaCollWait(first));
  EXPECT_EQ(b, world_size());
  ASSERT_TCA_OK(tcaCollFree(first));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCollStart(first));  // freed
  ASSERT_TCA_OK(tcaCollFree(second));
}

// A rank whose own part of the set-up fails (here: its region table full) does not leave the
// others waiting for its handles: every rank's tcaCollNew fails, and the job goes on. The first
// round fails in the job's first collective (the control regions), the second in a later one's
// buffers.
TEST_F(CollErrorTest, OneRankFailingItsSetUpFailsItOnEveryRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int failing_rank = world_size() - 1;
  const bool failing = world_rank() == failing_rank;
  std::vector<unsigned char> filler(64);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<tcaHandle> taken;
    for (int i = 0; failing && i < 8192; ++i) {
      tcaHandle handle{};
      const tcaResult made = tcaCreateHandle(&handle, filler.data(), filler.size(), TCA_MEM_CPU);
      if (made != TCA_SUCCESS) {
        ASSERT_EQ(made, TCA_ERROR_OUT_OF_RESOURCES) << tcaGetLastErrorMessage();
        break;
      }
      taken.push_back(handle);
    }
    double a[3] = {1, 2, 3};
    double b[3] = {};
    tcaColl coll = nullptr;
    EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_RESOURCES,
                     tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 3, a, b, nullptr));
    EXPECT_EQ(coll, nullptr);
    const std::string message = tcaGetLastErrorMessage();
    const std::string expected =
        failing ? "regions are registered already"
                : "rank " + std::to_string(failing_rank) + " could not set up its part";
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    for (const tcaHandle& handle : taken) ASSERT_TCA_OK(tcaDestroyHandle(&handle));
    ASSERT_TCA_OK(tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 3, a, b, nullptr));
    ASSERT_TCA_OK(tcaCollStart(coll));
    ASSERT_TCA_OK(tcaCollWait(coll));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(b[i], a[i] * world_size());
    ASSERT_TCA_OK(tcaCollFree(coll));
  }
}

TEST(CollNotInitialized, CallsFailCleanly) {
  double a = 1;
  double b = 0;
  tcaColl coll = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED,
                   tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, 1, &a, &b, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED,
                   tcaAllreduce(&a, &b, 1, TCA_DOUBLE, TCA_SUM, nullptr));
}

}  // namespace
}  // namespace tca_test
