// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// main() of the gtest programs, run under mpirun or alone. MPI lives for the whole program
// (tca is initialized and finalized per test). Rank 0 prints gtest's usual report; the other
// ranks print only their failures, tagged with the rank. Every rank exits non-zero when any
// rank failed, so mpirun (and ctest) fail as well.
//
// A failure on one rank can leave the ranks at different collectives, which then never
// return. A watchdog ends the process when one test runs longer than $TCA_TEST_WATCHDOG_S
// (default 120) seconds, naming the test, so such a hang fails fast and says where.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

class FailureOnlyPrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailureOnlyPrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
  }

  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (!test.result()->Failed()) return;
    std::fprintf(stderr, "[rank %d] [  FAILED  ] %s.%s\n", rank_, test.test_suite_name(),
                 test.name());
  }

 private:
  int rank_;
};

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  Watchdog(int rank, int limit_seconds)
      : rank_(rank), limit_(limit_seconds), thread_([this] { watch(); }) {}

  ~Watchdog() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  void OnTestStart(const ::testing::TestInfo& test) override {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::string(test.test_suite_name()) + "." + test.name();
    started_ = Clock::now();
    running_ = true;
  }

  void OnTestEnd(const ::testing::TestInfo&) override {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::seconds(1));
      if (running_ && Clock::now() - started_ > std::chrono::seconds(limit_)) {
        std::fprintf(stderr,
                     "[rank %d] watchdog: %s still running after %d s (ranks out of step "
                     "after a failure, or a hang); ending this process\n",
                     rank_, current_.c_str(), limit_);
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }

  const int rank_;
  const int limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool running_ = false;
  std::string current_;
  Clock::time_point started_;
  std::thread thread_;  // last: starts once every other member is ready
};

int watchdog_seconds() {
  const char* text = std::getenv("TCA_TEST_WATCHDOG_S");
  const int seconds = text != nullptr ? std::atoi(text) : 0;
  return seconds > 0 ? seconds : 120;
}

}  // namespace

int main(int argc, char** argv) {
  // SERIALIZED: tca may make MPI calls from its guard thread (TCA_MPI_GUARD).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailureOnlyPrinter(rank));
  }
  // Owned by gtest's listener list, which outlives RUN_ALL_TESTS; released again below so the
  // watch thread is joined before MPI_Finalize.
  auto* watchdog = new Watchdog(rank, watchdog_seconds());
  ::testing::UnitTest::GetInstance()->listeners().Append(watchdog);

  const int failed_here = RUN_ALL_TESTS() != 0 ? 1 : 0;
  delete ::testing::UnitTest::GetInstance()->listeners().Release(watchdog);
  int ranks_failed = 0;
  MPI_Allreduce(&failed_here, &ranks_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && ranks_failed > 0)
    std::fprintf(stderr, "FAILED: %d of %d rank(s) had failing tests\n", ranks_failed, size);
  MPI_Finalize();
  return ranks_failed > 0 ? 1 : 0;
}
