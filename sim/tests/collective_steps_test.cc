// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The library's collective steps as the replay models them: every send meets a wait of the same
// step at its receiver, the step and byte counts of each algorithm, and clear errors.
#include "collective_steps.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "params.h"

namespace tca_sim {
namespace {

const char* const kAlgorithms[] = {"ring", "neighbor_exchange", "recursive_doubling",
                                   "dissemination", "direct"};

// Sends and waits of every position, matched by (sender, receiver, step).
void expect_matched(const std::string& op, const std::string& algorithm, int n) {
  std::map<std::tuple<int, int, int>, int> balance;
  for (int me = 0; me < n; ++me)
    for (const CollectiveStep& s : collective_steps(op, algorithm, 4096.0 * n, n, me)) {
      ASSERT_NE(s.peer, me) << op << " " << algorithm << " n=" << n;
      if (s.send) {
        EXPECT_GT(s.bytes, 0) << op << " " << algorithm << " n=" << n;
        ++balance[{me, s.peer, s.step}];
      } else {
        --balance[{s.peer, me, s.step}];
      }
    }
  for (const auto& [key, count] : balance)
    EXPECT_EQ(count, 0) << op << " " << algorithm << " n=" << n << ": sender " << std::get<0>(key)
                        << " receiver " << std::get<1>(key) << " step " << std::get<2>(key);
}

TEST(CollectiveStepsTest, EverySendMeetsItsWait) {
  for (const char* op : {"allreduce", "allgather"})
    for (const char* algorithm : kAlgorithms)
      for (int n = 1; n <= 9; ++n) {
        if (std::string(algorithm) == "neighbor_exchange" && n % 2 != 0) continue;
        expect_matched(op, algorithm, n);
      }
}

double bytes_sent(const std::vector<CollectiveStep>& steps, int* sends) {
  double bytes = 0;
  *sends = 0;
  for (const CollectiveStep& s : steps)
    if (s.send) {
      bytes += s.bytes;
      ++*sends;
    }
  return bytes;
}

TEST(CollectiveStepsTest, StepsAndBytesOfEachAlgorithm) {
  int sends = 0;
  // Ring allreduce: reduce-scatter and allgather, 2(n-1) chunks of bytes/n.
  EXPECT_DOUBLE_EQ(bytes_sent(collective_steps("allreduce", "ring", 800, 4, 1), &sends), 6 * 200);
  EXPECT_EQ(sends, 6);
  // Recursive doubling: log2 n whole vectors; with 6 ranks the first 4 positions fold in pairs.
  EXPECT_DOUBLE_EQ(bytes_sent(collective_steps("allreduce", "recursive_doubling", 8, 8, 3), &sends),
                   24);
  EXPECT_EQ(sends, 3);
  EXPECT_EQ(collective_steps("allreduce", "recursive_doubling", 8, 6, 0).size(),
            2u);  // hand in, get back
  EXPECT_DOUBLE_EQ(bytes_sent(collective_steps("allreduce", "recursive_doubling", 8, 6, 1), &sends),
                   24);
  EXPECT_EQ(sends, 3);  // two exchanges, then the result to its partner
  // Dissemination allreduce gathers every vector (Bruck): 1 + 2 + 1 vectors among 5 ranks.
  EXPECT_DOUBLE_EQ(bytes_sent(collective_steps("allreduce", "dissemination", 8, 5, 2), &sends), 32);
  EXPECT_EQ(sends, 3);
  // Direct allgather: every send first, then every wait.
  const auto direct = collective_steps("allgather", "direct", 400, 4, 0);
  ASSERT_EQ(direct.size(), 6u);
  for (size_t i = 0; i < direct.size(); ++i) EXPECT_EQ(direct[i].send, i < 3) << i;
  EXPECT_DOUBLE_EQ(bytes_sent(direct, &sends), 300);
  // Neighbor exchange allgather: one block, then pairs: n/2 steps.
  EXPECT_DOUBLE_EQ(
      bytes_sent(collective_steps("allgather", "neighbor_exchange", 600, 6, 4), &sends), 500);
  EXPECT_EQ(sends, 3);
  EXPECT_TRUE(collective_steps("allreduce", "ring", 8, 1, 0).empty());
}

TEST(CollectiveStepsTest, ClearErrors) {
  EXPECT_THROW(collective_steps("allgather", "neighbor_exchange", 8, 3, 0), Error);
  EXPECT_THROW(collective_steps("allreduce", "butterfly", 8, 2, 0), Error);
  EXPECT_THROW(collective_steps("broadcast", "ring", 8, 2, 0), Error);
  EXPECT_THROW(collective_steps("allreduce", "ring", 8, 2, 2), Error);
  EXPECT_THROW(collective_steps("allreduce", "ring", 8, 0, 0), Error);
}

}  // namespace
}  // namespace tca_sim
