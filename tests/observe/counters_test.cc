// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The observer on 2 ranks over shm: counters equal to the traffic sent, byte for byte
// (tcaGetCounters, tcaResetCounters, TCA_STATS with %r), the state dump (tcaDumpState) and the
// timeout message naming what was awaited and what is outstanding.
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using tca_test::ScopedEnvironment;

std::string counters() {
  size_t bytes = 0;
  EXPECT_EQ(tcaGetCounters(nullptr, &bytes), TCA_SUCCESS) << tcaGetLastErrorMessage();
  std::string text(bytes, '\0');
  EXPECT_EQ(tcaGetCounters(text.data(), &bytes), TCA_SUCCESS) << tcaGetLastErrorMessage();
  text.resize(bytes - 1);
  return text;
}

// What tcaDumpState writes, as text.
std::string state_dump() {
  char* text = nullptr;
  size_t length = 0;
  FILE* memory = open_memstream(&text, &length);
  EXPECT_EQ(tcaDumpState(memory), TCA_SUCCESS) << tcaGetLastErrorMessage();
  std::fclose(memory);
  const std::string dump(text, length);
  free(text);
  return dump;
}

std::string cell(uint64_t transfers, uint64_t bytes, uint64_t kicks, uint64_t notifications) {
  return "{\"transfers\":" + std::to_string(transfers) + ",\"bytes\":" + std::to_string(bytes) +
         ",\"kicks\":" + std::to_string(kicks) +
         ",\"notifications\":" + std::to_string(notifications) + ",\"waits\":";
}

// The sum of a histogram's counts: the object after "name":.
uint64_t histogram_total(const std::string& json, const std::string& name) {
  const size_t at = json.find("\"" + name + "\":{");
  if (at == std::string::npos) return 0;
  const std::string body = json.substr(at, json.find('}', at) - at);
  uint64_t total = 0;
  // Every ":<digits>" in the object is one bucket's count.
  for (size_t colon = body.find(':'); colon != std::string::npos;
       colon = body.find(':', colon + 1)) {
    const size_t digits = body.find_first_not_of("0123456789", colon + 1);
    const size_t end = digits == std::string::npos ? body.size() : digits;
    if (end > colon + 1) total += std::stoull(body.substr(colon + 1, end - colon - 1));
  }
  return total;
}

class ObserveTest : public ::testing::Test {
 protected:
  void start() {
    ASSERT_TCA_OK(tcaInit());
    ASSERT_TCA_OK(tcaRank(&rank_));
    ASSERT_TCA_OK(tcaSize(&size_));
    ASSERT_EQ(size_, 2) << "run on 2 ranks";
    ASSERT_TCA_OK(tcaMalloc(&buffer_, kBytes, TCA_MEM_CPU));
    ASSERT_TCA_OK(tcaCreateHandle(&mine_, buffer_, kBytes, TCA_MEM_CPU));
    ASSERT_TCA_OK(tcaAllgatherHandles(&mine_, all_));
  }
  void TearDown() override {
    if (buffer_ == nullptr) return;
    EXPECT_TCA_OK(tcaBarrier());
    EXPECT_TCA_OK(tcaDestroyHandle(&mine_));
    EXPECT_TCA_OK(tcaFree(buffer_));
    EXPECT_TCA_OK(tcaFinalize());
  }

  // Rank 0 sends rank 1: a put of 1000 B, a 2-entry chain (300 B, then 4 x 16 B with a
  // notification on slot 3) kicked twice, a notification on slot 7; and gets 500 B from it.
  void send_known_traffic() {
    if (rank_ == 0) {
      std::vector<char> local(1000, 1);
      ASSERT_TCA_OK(tcaPut(&all_[1], 0, local.data(), 1000));
      tcaDesc chain = nullptr;
      ASSERT_TCA_OK(tcaDescNew(&chain));
      ASSERT_TCA_OK(tcaDescSetMemcpy(chain, &all_[1], 1024, &all_[0], 0, 300, 0, 0));
      ASSERT_TCA_OK(tcaDescSetMemcpy2D(chain, &all_[1], 2048, 32, &all_[0], 0, 32, 16, 4,
                                       TCA_FLAG_NOTIFY, 3));
      ASSERT_TCA_OK(tcaDescSet(chain, 0));
      for (int kick = 0; kick < 2; ++kick) {
        ASSERT_TCA_OK(tcaStartDMADesc(chain));
        ASSERT_TCA_OK(tcaWaitDMAC(0));
      }
      ASSERT_TCA_OK(tcaDescFree(chain));
      ASSERT_TCA_OK(tcaNotify(1, 7));
      ASSERT_TCA_OK(tcaGet(local.data(), &all_[1], 0, 500));
    } else {
      for (int slot : {3, 3, 7}) ASSERT_TCA_OK(tcaWaitDMARecvDesc(0, slot, nullptr));
    }
  }

  static constexpr size_t kBytes = 64 * 1024;
  int rank_ = 0;
  int size_ = 0;
  void* buffer_ = nullptr;
  tcaHandle mine_{};
  tcaHandle all_[2]{};
};

TEST_F(ObserveTest, CountersEqualTheTrafficSent) {
  ScopedEnvironment counting("TCA_COUNTERS", "timed");  // every operation timed
  ScopedEnvironment shm("TCA_TRANSPORT", "shm");
  ASSERT_NO_FATAL_FAILURE(start());
  ASSERT_NO_FATAL_FAILURE(send_known_traffic());
  ASSERT_TCA_OK(tcaBarrier());
  const std::string json = counters();
  if (rank_ == 0) {
    // out: 1000 + 2 x (300 + 64) bytes in 5 transfers, 2 kicks, 2 chained + 1 notification.
    EXPECT_NE(
        json.find(
            "{\"peer\":1,\"out\":{\"shm\":" + cell(5, 1728, 2, 3) +
            "0,\"timed_waits\":0,\"wait_ns\":0,\"timeouts\":0,\"errors\":0}},\"in\":{\"shm\":" +
            cell(1, 500, 0, 0) + "0,\"timed_waits\":0,\"wait_ns\":0,\"timeouts\":0,\"errors\":0}}"),
        std::string::npos)
        << json;
    EXPECT_EQ(histogram_total(json, "chain_latency_ns"), 4u) << json;  // 2 drains, put, get
    EXPECT_EQ(histogram_total(json, "wait_latency_ns"), 0u) << json;
  } else {
    EXPECT_NE(json.find("{\"peer\":0,\"out\":{},\"in\":{\"shm\":" + cell(0, 0, 0, 0) +
                        "3,\"timed_waits\":3,"),
              std::string::npos)
        << json;
    EXPECT_EQ(histogram_total(json, "wait_latency_ns"), 3u) << json;
  }
  ASSERT_TCA_OK(tcaResetCounters());
  EXPECT_NE(counters().find("\"peers\":[]"), std::string::npos);
}

// What each end of a cell counts besides the traffic: waits, timed waits, wait time, timeouts,
// errors (the JSON after a cell's "waits").
std::string tail(uint64_t waits, uint64_t timeouts, uint64_t errors) {
  return std::to_string(waits) +
         ",\"timed_waits\":0,\"wait_ns\":0,\"timeouts\":" + std::to_string(timeouts) +
         ",\"errors\":" + std::to_string(errors) + "}";
}

// A kick that fails counts each of the chain's transfers as an error of its cell, and no
// traffic; the kick before it counted its two transfers once as a kick.
TEST_F(ObserveTest, FailedKicksCountTheirTransfersAsErrors) {
  ScopedEnvironment counting("TCA_COUNTERS", "1");
  ScopedEnvironment shm("TCA_TRANSPORT", "shm");
  ASSERT_NO_FATAL_FAILURE(start());
  if (rank_ == 0) {
    void* scratch = nullptr;
    tcaHandle source{};
    ASSERT_TCA_OK(tcaMalloc(&scratch, 256, TCA_MEM_CPU));
    ASSERT_TCA_OK(tcaCreateHandle(&source, scratch, 256, TCA_MEM_CPU));
    tcaDesc chain = nullptr;
    ASSERT_TCA_OK(tcaDescNew(&chain));
    ASSERT_TCA_OK(tcaDescSetMemcpy(chain, &all_[1], 0, &source, 0, 64, 0, 0));
    ASSERT_TCA_OK(tcaDescSetMemcpy(chain, &all_[1], 128, &source, 64, 32, 0, 0));
    ASSERT_TCA_OK(tcaDescSet(chain, 1));
    ASSERT_TCA_OK(tcaStartDMADesc(chain));
    ASSERT_TCA_OK(tcaWaitDMAC(1));
    ASSERT_TCA_OK(tcaDestroyHandle(&source));
    EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaStartDMADesc(chain));
    ASSERT_TCA_OK(tcaDescFree(chain));
    ASSERT_TCA_OK(tcaFree(scratch));
    const std::string json = counters();
    EXPECT_NE(json.find("{\"peer\":1,\"out\":{\"shm\":" + cell(2, 96, 1, 0) + tail(0, 0, 2) +
                        "},\"in\":{}"),
              std::string::npos)
        << json;
  }
}

// A wait that ends a poll of the same slot, a plain blocking wait and one that times out: each
// counted once, the two that arrived timed.
TEST_F(ObserveTest, PolledAndBlockingWaitsCountEachNotification) {
  ScopedEnvironment counting("TCA_COUNTERS", "timed");
  ScopedEnvironment shm("TCA_TRANSPORT", "shm");
  ASSERT_NO_FATAL_FAILURE(start());
  if (rank_ == 1) {
    int arrived = 1;
    ASSERT_TCA_OK(tcaTestDMARecvDesc(0, 5, &arrived, nullptr));
    EXPECT_EQ(arrived, 0);  // nothing is sent before the barrier: the poll goes on
  }
  ASSERT_TCA_OK(tcaBarrier());
  if (rank_ == 0) {
    for (int i = 0; i < 2; ++i) ASSERT_TCA_OK(tcaNotify(1, 5));
  } else {
    for (int i = 0; i < 2; ++i) ASSERT_TCA_OK(tcaWaitDMARecvDesc(0, 5, nullptr));
    ASSERT_TCA_OK(tcaSetTimeout(50));
    EXPECT_TCA_ERROR(TCA_ERROR_TIMEOUT, tcaWaitDMARecvDesc(0, 6, nullptr));
    ASSERT_TCA_OK(tcaSetTimeout(30000));
  }
  const std::string json = counters();
  if (rank_ == 0) {
    EXPECT_NE(json.find("{\"peer\":1,\"out\":{\"shm\":" + cell(0, 0, 0, 2) + tail(0, 0, 0) +
                        "},\"in\":{}"),
              std::string::npos)
        << json;
  } else {
    const std::string in = "{\"peer\":0,\"out\":{},\"in\":{\"shm\":" + cell(0, 0, 0, 0) + "2,";
    EXPECT_NE(json.find(in + "\"timed_waits\":2,"), std::string::npos) << json;
    EXPECT_NE(json.find("\"timeouts\":1,\"errors\":0}}"), std::string::npos) << json;
    EXPECT_EQ(histogram_total(json, "wait_latency_ns"), 2u) << json;
  }
}

// With counters alone an untimed wait from a named rank counts before it begins: one that times
// out takes that count back and counts as a timeout, and the waits that arrived count once each.
TEST_F(ObserveTest, CountingAloneWaitThatTimesOutCountsOnlyAsATimeout) {
  ScopedEnvironment counting("TCA_COUNTERS", "1");
  ScopedEnvironment shm("TCA_TRANSPORT", "shm");
  ASSERT_NO_FATAL_FAILURE(start());
  constexpr int kArrived = 3;
  if (rank_ == 0) {
    for (int i = 0; i < kArrived; ++i) ASSERT_TCA_OK(tcaNotify(1, 5));
  } else {
    for (int i = 0; i < kArrived; ++i) ASSERT_TCA_OK(tcaWaitDMARecvDesc(0, 5, nullptr));
    ASSERT_TCA_OK(tcaSetTimeout(50));
    EXPECT_TCA_ERROR(TCA_ERROR_TIMEOUT, tcaWaitDMARecvDesc(0, 6, nullptr));
    ASSERT_TCA_OK(tcaSetTimeout(30000));
    const std::string json = counters();
    const std::string in = "{\"peer\":0,\"out\":{},\"in\":{\"shm\":" + cell(0, 0, 0, 0);
    EXPECT_NE(json.find(in + std::to_string(kArrived) + ",\"timed_waits\":0,"), std::string::npos)
        << json;
    EXPECT_NE(json.find("\"timeouts\":1,\"errors\":0}}"), std::string::npos) << json;
  }
  ASSERT_TCA_OK(tcaBarrier());
}

// With counters alone every kick and wait counts once, whichever form the wait takes (from a
// named rank or any, with or without `from`), and one in 64 of each kind is timed: of 80 kicks
// and 80 waits, the 64th.
TEST_F(ObserveTest, CountingAloneCountsEveryOperationAndTimesOneIn64) {
  ScopedEnvironment counting("TCA_COUNTERS", "1");
  ScopedEnvironment shm("TCA_TRANSPORT", "shm");
  ASSERT_NO_FATAL_FAILURE(start());
  constexpr int kTimes = 80;
  if (rank_ == 0) {
    tcaDesc chain = nullptr;
    ASSERT_TCA_OK(tcaDescNew(&chain));
    ASSERT_TCA_OK(tcaDescSetMemcpy(chain, &all_[1], 0, &all_[0], 0, 64, TCA_FLAG_NOTIFY, 1));
    ASSERT_TCA_OK(tcaDescSet(chain, 0));
    for (int kick = 0; kick < kTimes; ++kick) {
      ASSERT_TCA_OK(tcaStartDMADesc(chain));
      ASSERT_TCA_OK(tcaWaitDMAC(0));
    }
    ASSERT_TCA_OK(tcaDescFree(chain));
    const std::string json = counters();
    EXPECT_NE(json.find("{\"peer\":1,\"out\":{\"shm\":" +
                        cell(kTimes, 64 * kTimes, kTimes, kTimes) + tail(0, 0, 0) + "},\"in\":{}"),
              std::string::npos)
        << json;
    EXPECT_EQ(histogram_total(json, "chain_latency_ns"), 1u) << json;
  } else {
    for (int wait = 0; wait < kTimes; ++wait) {
      int from = -2;
      const int src = wait % 2 == 0 ? 0 : TCA_ANY_RANK;
      const bool asks_from = wait % 4 < 2;
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(src, 1, asks_from ? &from : nullptr));
      EXPECT_EQ(from, asks_from ? 0 : -2) << "wait " << wait;
    }
    const std::string json = counters();
    const std::string in = "{\"peer\":0,\"out\":{},\"in\":{\"shm\":" + cell(0, 0, 0, 0);
    EXPECT_NE(json.find(in + std::to_string(kTimes) + ",\"timed_waits\":1,"), std::string::npos)
        << json;
    EXPECT_EQ(histogram_total(json, "wait_latency_ns"), 1u) << json;
  }
}

// With counters alone (no dumps asked for) a dump still gives a kicked chain's age.
TEST_F(ObserveTest, DumpGivesTheAgeOfAKickedChain) {
  ScopedEnvironment counting("TCA_COUNTERS", "1");
  ScopedEnvironment shm("TCA_TRANSPORT", "shm");
  ASSERT_NO_FATAL_FAILURE(start());
  if (rank_ == 0) {
    tcaDesc chain = nullptr;
    ASSERT_TCA_OK(tcaDescNew(&chain));
    ASSERT_TCA_OK(tcaDescSetMemcpy(chain, &all_[1], 0, &all_[0], 0, 64, TCA_FLAG_NOTIFY, 2));
    ASSERT_TCA_OK(tcaDescSet(chain, 2));
    ASSERT_TCA_OK(tcaStartDMADesc(chain));
    const std::string dump = state_dump();
    const size_t age = dump.find("\"age_ms\":");
    ASSERT_NE(age, std::string::npos) << "no chain in flight in: " << dump;  // shm completes
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(dump[age + 9]))) << dump;
    ASSERT_TCA_OK(tcaWaitDMAC(2));
    ASSERT_TCA_OK(tcaDescFree(chain));
  } else {
    ASSERT_TCA_OK(tcaWaitDMARecvDesc(0, 2, nullptr));
  }
}

TEST_F(ObserveTest, GetCountersChecksItsBuffer) {
  ASSERT_NO_FATAL_FAILURE(start());
  size_t bytes = 0;
  EXPECT_TCA_ERROR(TCA_ERROR_UNSUPPORTED, tcaGetCounters(nullptr, &bytes));  // off by default
  EXPECT_TCA_ERROR(TCA_ERROR_UNSUPPORTED, tcaResetCounters());
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaDumpState(nullptr));
}

TEST_F(ObserveTest, GetCountersReportsTheSizeItNeeds) {
  ScopedEnvironment counting("TCA_COUNTERS", "1");
  ASSERT_NO_FATAL_FAILURE(start());
  size_t bytes = 0;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaGetCounters(nullptr, nullptr));
  ASSERT_TCA_OK(tcaGetCounters(nullptr, &bytes));
  std::string small(4, 'x');
  size_t given = small.size();
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaGetCounters(small.data(), &given));
  EXPECT_EQ(given, bytes);
  EXPECT_EQ(small, "xxxx");  // a refused call writes nothing
}

TEST_F(ObserveTest, StatsFileAtFinalize) {
  // tca-run's ranks share their parent: one name for the job.
  const std::string pattern = "/tmp/tca-observe-stats-" + std::to_string(getppid()) + "-%r.json";
  {
    ScopedEnvironment stats("TCA_STATS", pattern);
    ScopedEnvironment shm("TCA_TRANSPORT", "shm");
    ASSERT_NO_FATAL_FAILURE(start());
    ASSERT_NO_FATAL_FAILURE(send_known_traffic());
    TearDown();
    buffer_ = nullptr;
  }
  std::string path = pattern;
  path.replace(path.find("%r"), 2, std::to_string(rank_));
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << path;
  std::stringstream text;
  text << file.rdbuf();
  std::remove(path.c_str());
  EXPECT_NE(text.str().find("{\"rank\":" + std::to_string(rank_) + ",\"size\":2,"),
            std::string::npos);
  if (rank_ == 0) {
    EXPECT_NE(text.str().find("\"out\":{\"shm\":" + cell(5, 1728, 2, 3)), std::string::npos)
        << text.str();
  }
}

TEST_F(ObserveTest, TimeoutNamesTheWaitAndWhatIsOutstanding) {
  ASSERT_NO_FATAL_FAILURE(start());
  if (rank_ == 0) {
    tcaDesc chain = nullptr;
    ASSERT_TCA_OK(tcaDescNew(&chain));
    ASSERT_TCA_OK(tcaDescSetMemcpy(chain, &all_[1], 0, &all_[0], 0, 128, TCA_FLAG_NOTIFY, 4));
    ASSERT_TCA_OK(tcaDescSet(chain, 2));
    ASSERT_TCA_OK(tcaStartDMADesc(chain));  // kicked, not drained
    ASSERT_TCA_OK(tcaSetTimeout(200));
    EXPECT_TCA_ERROR(TCA_ERROR_TIMEOUT, tcaWaitDMARecvDesc(1, 5, nullptr));
    const std::string message = tcaGetLastErrorMessage();
    for (const char* part : {"rank 0 waited 200 ms for a notification on slot 5 from rank 1",
                             "rank 1: 0 arrived, 0 consumed", "1 chain(s) kicked and not drained",
                             "[channel 2, 1 entries, peers 1]"})
      EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;

    const std::string dump = state_dump();
    for (const char* part :
         {"{\"tca_state\":1,\"rank\":0,\"size\":2,\"reason\":\"tcaDumpState\"",
          "\"channel\":2,\"entries\":1,\"peers\":[1],\"transports\":[\"",
          "\"bytes\":128,\"notifies\":[{\"peer\":1,\"slot\":4}]",
          "{\"peer\":1,\"slot\":4,\"sent\":1,", "\"collective\":null", "\"dead_peers\":[]"})
      EXPECT_NE(dump.find(part), std::string::npos) << part << " not in: " << dump;
    ASSERT_TCA_OK(tcaSetTimeout(30000));
    ASSERT_TCA_OK(tcaWaitDMAC(2));
    ASSERT_TCA_OK(tcaDescFree(chain));
  } else {
    ASSERT_TCA_OK(tcaWaitDMARecvDesc(0, 4, nullptr));
  }
}

}  // namespace
