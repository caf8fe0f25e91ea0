// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Teams: split by parity, by host, into singletons, with ranks that join none, from explicit
// lists, nested; rank translation; collectives of every algorithm over each team checked
// against the serial result computed from the members' world ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "tca/tca_coll.h"
#include "test_util.h"

namespace {

constexpr int kTimeoutMs = 30000;
constexpr size_t kCount = 1000;  // elements per rank: not a multiple of any team size here

// What world rank `world` contributes at element i of iteration `round`.
int64_t contribution(int world, size_t i, int round) {
  return static_cast<int64_t>(world + 1) * static_cast<int64_t>(i + 3) + round * 7;
}

// The members' world ranks in team order.
std::vector<int> members(tcaTeam team) {
  int size = 0;
  EXPECT_TCA_OK(tcaTeamSize(team, &size));
  std::vector<int> world(size, -1);
  for (int r = 0; r < size; ++r)
    EXPECT_TCA_OK(tcaTeamTranslateRank(team, r, TCA_TEAM_WORLD, &world[r]));
  return world;
}

// Allreduce (sum, max) and allgather of every algorithm over `team`, persistent for a few
// iterations and one-shot, each checked element by element against the serial result.
void check_collectives(tcaTeam team) {
  const std::vector<int> world = members(team);
  int me = -1, world_me = -1;
  ASSERT_TCA_OK(tcaTeamRank(team, &me));
  ASSERT_TCA_OK(tcaRank(&world_me));
  ASSERT_EQ(world[me], world_me);
  const int n = static_cast<int>(world.size());
  for (int a = TCA_COLL_RING; a < TCA_COLL_ALGORITHMS; ++a) {
    tcaCollConfig config{};
    config.algorithm = static_cast<tcaCollAlgorithm>(a);
    config.team = team;
    std::vector<int64_t> send(kCount), sum(kCount), gathered(kCount * n);
    tcaColl reduce = nullptr, gather = nullptr;
    ASSERT_TCA_OK(tcaCollNew(&reduce, TCA_COLL_ALLREDUCE, TCA_INT64, TCA_SUM, kCount, send.data(),
                             sum.data(), &config));
    ASSERT_TCA_OK(tcaCollNew(&gather, TCA_COLL_ALLGATHER, TCA_INT64, TCA_SUM, kCount, send.data(),
                             gathered.data(), &config));
    for (int round = 0; round < 3; ++round) {
      for (size_t i = 0; i < kCount; ++i) send[i] = contribution(world_me, i, round);
      ASSERT_TCA_OK(tcaCollStart(reduce));
      ASSERT_TCA_OK(tcaCollWait(reduce));
      ASSERT_TCA_OK(tcaCollStart(gather));
      ASSERT_TCA_OK(tcaCollWait(gather));
      for (size_t i = 0; i < kCount; ++i) {
        int64_t expected = 0;
        for (int w : world) expected += contribution(w, i, round);
        ASSERT_EQ(sum[i], expected) << tcaCollAlgorithmName(config.algorithm) << " element " << i;
        for (int r = 0; r < n; ++r)
          ASSERT_EQ(gathered[r * kCount + i], contribution(world[r], i, round))
              << tcaCollAlgorithmName(config.algorithm) << " block " << r << " element " << i;
      }
    }
    ASSERT_TCA_OK(tcaCollFree(reduce));
    ASSERT_TCA_OK(tcaCollFree(gather));
    // One-shot, in place, maximum.
    std::vector<int64_t> value(kCount);
    for (size_t i = 0; i < kCount; ++i) value[i] = contribution(world_me, i, a);
    ASSERT_TCA_OK(tcaAllreduce(value.data(), value.data(), kCount, TCA_INT64, TCA_MAX, &config));
    for (size_t i = 0; i < kCount; ++i) {
      int64_t expected = INT64_MIN;
      for (int w : world) expected = std::max(expected, contribution(w, i, a));
      ASSERT_EQ(value[i], expected);
    }
  }
}

class TeamTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    tcaConfig config{GetParam().c_str(), kTimeoutMs};
    ASSERT_TCA_OK(tcaInitWithConfig(&config));
    ASSERT_TCA_OK(tcaRank(&rank_));
    ASSERT_TCA_OK(tcaSize(&size_));
    initialized_ = true;
  }
  void TearDown() override {
    if (!initialized_) return;
    EXPECT_TCA_OK(tcaCollReleaseCache());
    EXPECT_TCA_OK(tcaFinalize());
  }
  int rank_ = 0;
  int size_ = 1;
  bool initialized_ = false;
};

TEST_P(TeamTest, WorldIsEveryRankInOrder) {
  std::vector<int> world = members(TCA_TEAM_WORLD);
  ASSERT_EQ(static_cast<int>(world.size()), size_);
  for (int r = 0; r < size_; ++r) EXPECT_EQ(world[r], r);
  check_collectives(TCA_TEAM_WORLD);
}

TEST_P(TeamTest, SplitByParityReversedByKey) {
  tcaTeam team = TCA_TEAM_INVALID;
  ASSERT_TCA_OK(tcaTeamSplit(TCA_TEAM_WORLD, rank_ % 2, -rank_, &team));
  ASSERT_NE(team, TCA_TEAM_INVALID);
  std::vector<int> expected;
  for (int r = size_ - 1; r >= 0; --r)
    if (r % 2 == rank_ % 2) expected.push_back(r);
  EXPECT_EQ(members(team), expected);
  int mine = -1, back = -1;
  ASSERT_TCA_OK(tcaTeamTranslateRank(TCA_TEAM_WORLD, rank_, team, &mine));
  ASSERT_TCA_OK(tcaTeamTranslateRank(team, mine, TCA_TEAM_WORLD, &back));
  EXPECT_EQ(back, rank_);
  if ((rank_ ^ 1) < size_) {  // a rank of the other parity is no member
    int other = 0;
    ASSERT_TCA_OK(tcaTeamTranslateRank(TCA_TEAM_WORLD, rank_ ^ 1, team, &other));
    EXPECT_EQ(other, -1);
  }
  check_collectives(team);
  ASSERT_TCA_OK(tcaTeamBarrier(team));
  ASSERT_TCA_OK(tcaTeamFree(team));
  int size = 0;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaTeamSize(team, &size));
}

// Hosts as tca sees them (TCA_HOST_ID fakes several): a peer is on this host where shared memory
// reaches it; the colour is the lowest world rank of the host.
TEST_P(TeamTest, SplitByHost) {
  int color = rank_;
  for (int peer = 0; peer < rank_; ++peer) {
    int available = 0;
    ASSERT_TCA_OK(tcaPathAvailable(TCA_PATH_SHM, peer, &available));
    if (available) {
      color = peer;
      break;
    }
  }
  tcaTeam team = TCA_TEAM_INVALID;
  ASSERT_TCA_OK(tcaTeamSplit(TCA_TEAM_WORLD, color, 0, &team));
  for (int w : members(team)) {
    if (w == rank_) continue;
    int available = 0;
    ASSERT_TCA_OK(tcaPathAvailable(TCA_PATH_SHM, w, &available));
    EXPECT_TRUE(available) << "world rank " << w << " is in this rank's host team";
  }
  check_collectives(team);
  ASSERT_TCA_OK(tcaTeamFree(team));
}

TEST_P(TeamTest, SingletonTeams) {
  tcaTeam team = TCA_TEAM_INVALID;
  ASSERT_TCA_OK(tcaTeamSplit(TCA_TEAM_WORLD, rank_, 0, &team));
  EXPECT_EQ(members(team), std::vector<int>{rank_});
  check_collectives(team);
  ASSERT_TCA_OK(tcaTeamFree(team));
}

TEST_P(TeamTest, RanksWithoutColourJoinNoTeam) {
  // World rank 0 joins none; the others form one team (of nobody when alone).
  tcaTeam team = 12345;
  ASSERT_TCA_OK(tcaTeamSplit(TCA_TEAM_WORLD, rank_ == 0 ? TCA_TEAM_NO_COLOR : 5, rank_, &team));
  if (rank_ == 0) {
    EXPECT_EQ(team, TCA_TEAM_INVALID);
  } else {
    std::vector<int> expected(size_ - 1);
    std::iota(expected.begin(), expected.end(), 1);
    EXPECT_EQ(members(team), expected);
    check_collectives(team);
    ASSERT_TCA_OK(tcaTeamFree(team));
  }
  // Releasing the one-shot cache is collective over the teams it holds entries of: rank 0 holds
  // none and owes the others nothing, so the world's next calls still meet (with a barrier too
  // many or too few on some rank, this allreduce and tcaFinalize would not).
  ASSERT_TCA_OK(tcaCollReleaseCache());
  int64_t sum = rank_ + 1;
  ASSERT_TCA_OK(tcaAllreduce(&sum, &sum, 1, TCA_INT64, TCA_SUM, nullptr));
  EXPECT_EQ(sum, static_cast<int64_t>(size_) * (size_ + 1) / 2);
}

TEST_P(TeamTest, ExplicitListAndNestedSplit) {
  // The world in reverse, then its halves split from it.
  std::vector<int> reversed(size_);
  for (int r = 0; r < size_; ++r) reversed[r] = size_ - 1 - r;
  tcaTeam team = TCA_TEAM_INVALID;
  ASSERT_TCA_OK(tcaTeamCreate(TCA_TEAM_WORLD, size_, reversed.data(), &team));
  EXPECT_EQ(members(team), reversed);
  int mine = -1;
  ASSERT_TCA_OK(tcaTeamRank(team, &mine));
  EXPECT_EQ(mine, size_ - 1 - rank_);
  check_collectives(team);
  tcaTeam half = TCA_TEAM_INVALID;
  ASSERT_TCA_OK(tcaTeamSplit(team, mine < (size_ + 1) / 2 ? 0 : 1, 0, &half));
  std::vector<int> expected;
  for (int r = 0; r < size_; ++r)
    if ((r < (size_ + 1) / 2) == (mine < (size_ + 1) / 2)) expected.push_back(reversed[r]);
  EXPECT_EQ(members(half), expected);
  check_collectives(half);
  // A list without this rank: it gets no team.
  if (size_ > 1) {
    std::vector<int> firsts(size_);
    for (int r = 0; r < size_; ++r) firsts[r] = (r + 1) % size_;
    tcaTeam one = 777;
    ASSERT_TCA_OK(tcaTeamCreate(TCA_TEAM_WORLD, 1, &firsts[0], &one));
    EXPECT_EQ(one == TCA_TEAM_INVALID, rank_ != firsts[0]);
    if (one != TCA_TEAM_INVALID) {
      ASSERT_TCA_OK(tcaTeamFree(one));
    }
  }
  ASSERT_TCA_OK(tcaTeamFree(half));
  ASSERT_TCA_OK(tcaTeamFree(team));
}

TEST_P(TeamTest, BadArgumentsAreRejected) {
  tcaTeam team = TCA_TEAM_INVALID;
  int value = 0;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaTeamSplit(TCA_TEAM_WORLD, -5, 0, &team));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaTeamSplit(TCA_TEAM_WORLD, 0, 0, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaTeamSize(TCA_TEAM_INVALID, &value));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaTeamRank(4242, &value));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaTeamTranslateRank(TCA_TEAM_WORLD, size_, 0, &value));
  const int twice[2] = {0, 0};
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaTeamCreate(TCA_TEAM_WORLD, 2, twice, &team));
  const int outside[1] = {size_};
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaTeamCreate(TCA_TEAM_WORLD, 1, outside, &team));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaTeamCreate(TCA_TEAM_WORLD, 0, twice, &team));
  tcaCollConfig config{};
  config.team = 4242;
  int64_t x = 1;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaAllreduce(&x, &x, 1, TCA_INT64, TCA_SUM, &config));
  EXPECT_TCA_OK(tcaTeamFree(TCA_TEAM_WORLD));  // the world stays
  EXPECT_TCA_OK(tcaTeamSize(TCA_TEAM_WORLD, &value));
}

std::vector<std::string> transports() {
  std::vector<std::string> names{"shm"};
#ifdef TCA_TESTS_MPI
  names.push_back("mpi");
#endif
  return names;
}

INSTANTIATE_TEST_SUITE_P(Team, TeamTest, ::testing::ValuesIn(transports()),
                         [](const auto& info) { return info.param; });

}  // namespace
