// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Unit tests of the call guard (bootstrap/call_guard.h): calls run on its thread and bring back
// their result and message; a rank found dead before a call keeps it from running; a rank dying
// during a call that never returns lets the caller go within milliseconds and closes the guard
// for good; a call whose ranks' deaths cannot be seen is waited for.
#include "bootstrap/call_guard.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"

namespace tca {
namespace {

using Clock = std::chrono::steady_clock;

// Ranks listed in `dead` have died; the others are alive (or on another machine: unseen).
struct FakeRanks {
  std::vector<std::atomic<bool>> dead = std::vector<std::atomic<bool>>(4);
  CallGuard::Liveness liveness() {
    return [this](int rank) -> tcaResult {
      if (dead[rank].load()) TCA_FAIL(TCA_ERROR_PEER_FAILED, "rank {} has exited", rank);
      return TCA_SUCCESS;
    };
  }
};

const std::vector<int> kOthers{1, 2, 3};

TEST(CallGuard, NotStartedRunsOnTheCallersThread) {
  CallGuard guard;
  std::thread::id ran_on;
  EXPECT_EQ(guard.run(nullptr, "a call",
                      [&] {
                        ran_on = std::this_thread::get_id();
                        return TCA_SUCCESS;
                      }),
            TCA_SUCCESS);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_FALSE(guard.engaged());
}

TEST(CallGuard, StartedRunsOnItsThreadAndCarriesTheResult) {
  FakeRanks ranks;
  CallGuard guard;
  ASSERT_EQ(guard.start(ranks.liveness(), kOthers), TCA_SUCCESS);
  EXPECT_EQ(guard.start(ranks.liveness(), kOthers), TCA_ERROR_ALREADY_INITIALIZED);
  std::thread::id ran_on;
  EXPECT_EQ(guard.run(nullptr, "a call",
                      [&] {
                        ran_on = std::this_thread::get_id();
                        return TCA_SUCCESS;
                      }),
            TCA_SUCCESS);
  EXPECT_NE(ran_on, std::this_thread::get_id());

  const std::vector<int> one{2};
  const tcaResult failed = guard.run(&one, "a failing call", []() -> tcaResult {
    TCA_FAIL(TCA_ERROR_TRANSPORT, "the library said no (code {})", 17);
  });
  EXPECT_EQ(failed, TCA_ERROR_TRANSPORT);
  EXPECT_NE(std::string(last_error_message()).find("the library said no (code 17)"),
            std::string::npos)
      << last_error_message();
  for (int i = 0; i < 1000; ++i) {  // many short calls: each answered, none lost
    int value = 0;
    ASSERT_EQ(guard.run(&one, "a short call",
                        [&] {
                          value = i;
                          return TCA_SUCCESS;
                        }),
              TCA_SUCCESS);
    ASSERT_EQ(value, i);
  }
  EXPECT_FALSE(guard.peer_failed());
  guard.stop();
  EXPECT_FALSE(guard.engaged());
}

TEST(CallGuard, RankDeadBeforeTheCallKeepsItFromRunning) {
  FakeRanks ranks;
  CallGuard guard;
  ASSERT_EQ(guard.start(ranks.liveness(), kOthers), TCA_SUCCESS);
  ranks.dead[3] = true;
  int runs = 0;
  const std::vector<int> only_one{1};
  EXPECT_EQ(guard.run(nullptr, "a collective",
                      [&] {
                        ++runs;
                        return TCA_SUCCESS;
                      }),
            TCA_ERROR_PEER_FAILED);
  EXPECT_NE(std::string(last_error_message()).find("rank 3 has exited"), std::string::npos);
  EXPECT_EQ(runs, 0);
  EXPECT_TRUE(guard.peer_failed());
  EXPECT_FALSE(guard.abandoned());
  // A call that does not involve the dead rank still runs.
  EXPECT_EQ(guard.run(&only_one, "a call to rank 1",
                      [&] {
                        ++runs;
                        return TCA_SUCCESS;
                      }),
            TCA_SUCCESS);
  EXPECT_EQ(runs, 1);
}

TEST(CallGuard, RankDyingDuringACallLetsTheCallerGo) {
  FakeRanks ranks;
  // Never destroyed (and still reachable, for the leak checker): the abandoned call's thread
  // may outlive the test, as inside MPI it would.
  static CallGuard* const guard = new CallGuard();
  ASSERT_EQ(guard->start(ranks.liveness(), kOthers), TCA_SUCCESS);
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto entered = std::make_shared<std::atomic<bool>>(false);
  std::thread killer([&] {
    while (!entered->load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ranks.dead[2] = true;
  });
  const std::vector<int> involved{2};
  const auto begin = Clock::now();
  const tcaResult result = guard->run(&involved, "a get from rank 2", [release, entered] {
    entered->store(true);
    while (!release->load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    return TCA_SUCCESS;  // like MPI retrying a dead peer: only the test ends it
  });
  const double waited = std::chrono::duration<double>(Clock::now() - begin).count();
  killer.join();
  EXPECT_EQ(result, TCA_ERROR_PEER_FAILED);
  const std::string message = last_error_message();
  EXPECT_NE(message.find("a get from rank 2 was given up on"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 2 has exited"), std::string::npos) << message;
  EXPECT_LT(waited, 1.0) << "the caller was held " << waited << " s after the rank died";
  EXPECT_TRUE(guard->abandoned());
  EXPECT_TRUE(guard->engaged());

  // From now on nothing enters the library: not through run(), not after stop(), not restarted.
  int runs = 0;
  EXPECT_EQ(guard->run(nullptr, "a later call",
                       [&] {
                         ++runs;
                         return TCA_SUCCESS;
                       }),
            TCA_ERROR_PEER_FAILED);
  guard->stop();
  EXPECT_EQ(guard->run(nullptr, "a call after stop",
                       [&] {
                         ++runs;
                         return TCA_SUCCESS;
                       }),
            TCA_ERROR_PEER_FAILED);
  EXPECT_EQ(guard->start(ranks.liveness(), kOthers), TCA_ERROR_PEER_FAILED);
  EXPECT_EQ(runs, 0);
  release->store(true);  // the abandoned call returns at last; its thread touches nothing
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(runs, 0);
}

TEST(CallGuard, CallWhoseRanksCannotBeSeenIsWaitedFor) {
  FakeRanks ranks;  // nobody dies as far as the guard can see (ranks on other machines)
  CallGuard guard;
  ASSERT_EQ(guard.start(ranks.liveness(), kOthers), TCA_SUCCESS);
  const auto begin = Clock::now();
  EXPECT_EQ(guard.run(nullptr, "a slow call",
                      [] {
                        std::this_thread::sleep_for(std::chrono::milliseconds(60));
                        return TCA_SUCCESS;
                      }),
            TCA_SUCCESS);
  EXPECT_GE(Clock::now() - begin, std::chrono::milliseconds(60));
  EXPECT_FALSE(guard.abandoned());
}

}  // namespace
}  // namespace tca
