// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// main() of the gtest programs, run under mpirun, tca-run (the tcp bootstrap), torchrun or
// alone. Where an MPI launcher started the ranks (or the program runs alone) MPI lives for the
// whole program; under tca-run or torchrun MPI is never initialized, so tca starts itself over
// tcp (tca is initialized and finalized per test). Rank 0 prints gtest's usual report; the other
// ranks print only their failures, tagged with the rank. Under MPI every rank exits non-zero
// when any rank failed; under tca-run the failing rank's status ends the job.
//
// A failure on one rank can leave the ranks at different collectives, which then never
// return. A watchdog ends the process when one test runs longer than $TCA_TEST_WATCHDOG_S
// (default 120) seconds, naming the test, so such a hang fails fast and says where.
#include <gtest/gtest.h>
#ifdef TCA_TESTS_MPI
#include <mpi.h>
#endif

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "test_util.h"

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
#ifdef TCA_TESTS_MPI
  // SERIALIZED: tca may make MPI calls from its guard thread (TCA_MPI_GUARD).
  const bool mpi = tca_test::started_by_mpi();
  if (mpi) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  }
#endif
  ::testing::InitGoogleTest(&argc, argv);
  const int rank = tca_test::world_rank();
  const int size = tca_test::world_size();
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
  int ranks_failed = failed_here;
#ifdef TCA_TESTS_MPI
  if (mpi) {
    MPI_Allreduce(&failed_here, &ranks_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
  }
#endif
  if (rank == 0 && ranks_failed > 0)
    std::fprintf(stderr, "FAILED: %d of %d rank(s) had failing tests\n", ranks_failed, size);
  return ranks_failed > 0 ? 1 : 0;
}
