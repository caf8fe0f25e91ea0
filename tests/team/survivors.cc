// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Survivors carry on: ranks run a loop of allreduces over a team; victims leave in the middle of
// an iteration (after kicking their part of it, without a word: _Exit, as a killed process
// leaves); the survivors see the failure, shrink the team (tcaTeamShrink), agree on the first
// iteration to redo and finish the loop on the new team, every sum checked.
//
// Usage: tca_team_survivors TRANSPORT RANK@ITERATION[,RANK@ITERATION...]
// Every rank exits 0 when all went as it should: a victim at its death, a survivor when it saw
// one failure per death, ended on a team of the ranks that were never victims, and checked every
// sum. A survivor prints "survivor R: ..." lines and leaves without tcaFinalize (collective with
// the dead).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tca/tca_coll.h"
#include "test_util.h"

namespace {

constexpr int kTimeoutMs = 1500;  // a survivor's wait on the dead gives up after this
constexpr int kIterations = 24;
constexpr size_t kCount = 4096;

struct Death {
  int rank;
  int iteration;
};

int g_rank = -1;
double g_start = 0;

[[noreturn]] void fail(const char* what, tcaResult result) {
  std::printf("rank %d: FAILED %s: %s: %s (after %.1f s)\n", g_rank, what,
              tca_test::result_name(result), tcaGetLastErrorMessage(),
              tca_test::seconds_since(g_start));
  std::fflush(stdout);
  std::_Exit(1);
}

#define CALL(call)                                    \
  do {                                                \
    const tcaResult result_ = (call);                 \
    if (result_ != TCA_SUCCESS) fail(#call, result_); \
  } while (0)

std::vector<Death> parse_deaths(const char* text) {
  std::vector<Death> deaths;
  std::string all(text);
  size_t at = 0;
  while (at < all.size()) {
    size_t end = all.find(',', at);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(at, end - at);
    const size_t sign = item.find('@');
    if (sign == std::string::npos) return {};
    deaths.push_back({std::atoi(item.c_str()), std::atoi(item.c_str() + sign + 1)});
    at = end + 1;
  }
  return deaths;
}

int64_t contribution(int world, size_t i, int iteration) {
  return static_cast<int64_t>(world + 1) * static_cast<int64_t>(i + 1) + iteration;
}

tcaColl make_allreduce(tcaTeam team, std::vector<int64_t>& send, std::vector<int64_t>& sum) {
  tcaCollConfig config{};
  config.algorithm = TCA_COLL_RING;
  config.team = team;
  tcaColl coll = nullptr;
  CALL(tcaCollNew(&coll, TCA_COLL_ALLREDUCE, TCA_INT64, TCA_SUM, kCount, send.data(), sum.data(),
                  &config));
  return coll;
}

std::vector<int> team_members(tcaTeam team) {
  int size = 0;
  CALL(tcaTeamSize(team, &size));
  std::vector<int> world(size);
  for (int r = 0; r < size; ++r) CALL(tcaTeamTranslateRank(team, r, TCA_TEAM_WORLD, &world[r]));
  return world;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Death> deaths = argc == 3 ? parse_deaths(argv[2]) : std::vector<Death>{};
  if (deaths.empty()) {
    std::fprintf(stderr, "usage: %s TRANSPORT RANK@ITERATION[,RANK@ITERATION...]\n", argv[0]);
    return 2;
  }
  g_start = tca_test::now_seconds();
  tcaConfig config{argv[1], kTimeoutMs};
  CALL(tcaInitWithConfig(&config));
  CALL(tcaRank(&g_rank));
  int size = 0;
  CALL(tcaSize(&size));
  std::vector<bool> victim(size, false);
  for (const Death& death : deaths) {
    if (death.rank < 0 || death.rank >= size || death.iteration < 0 ||
        death.iteration >= kIterations) {
      std::printf("rank %d: death %d@%d is outside %d ranks and %d iterations\n", g_rank,
                  death.rank, death.iteration, size, kIterations);
      return 2;
    }
    victim[death.rank] = true;
  }

  std::vector<int64_t> send(kCount), sum(kCount);
  tcaTeam team = TCA_TEAM_WORLD;
  tcaColl coll = make_allreduce(team, send, sum);
  int failures = 0;
  for (int iteration = 0; iteration < kIterations;) {
    for (size_t i = 0; i < kCount; ++i) send[i] = contribution(g_rank, i, iteration);
    const tcaResult started = tcaCollStart(coll);  // kicks chains: may meet the dead already
    for (const Death& death : deaths) {
      if (death.rank != g_rank || death.iteration != iteration) continue;
      std::printf("victim %d: leaving in iteration %d after %.1f s\n", g_rank, iteration,
                  tca_test::seconds_since(g_start));
      std::fflush(stdout);
      std::_Exit(0);
    }
    const tcaResult waited = started != TCA_SUCCESS ? started : tcaCollWait(coll);
    if (waited == TCA_SUCCESS) {
      const std::vector<int> world = team_members(team);
      for (size_t i = 0; i < kCount; ++i) {
        int64_t expected = 0;
        for (int w : world) expected += contribution(w, i, iteration);
        if (sum[i] != expected) {
          std::printf("rank %d: FAILED iteration %d element %zu: %lld, expected %lld\n", g_rank,
                      iteration, i, static_cast<long long>(sum[i]),
                      static_cast<long long>(expected));
          return 1;
        }
      }
      ++iteration;
      continue;
    }
    if (waited != TCA_ERROR_PEER_FAILED && waited != TCA_ERROR_TIMEOUT)
      fail("tcaCollStart/tcaCollWait", waited);
    ++failures;
    std::printf("survivor %d: iteration %d failed with %s after %.1f s\n", g_rank, iteration,
                tca_test::result_name(waited), tca_test::seconds_since(g_start));
    tcaTeam survivors = TCA_TEAM_INVALID;
    CALL(tcaTeamShrink(team, &survivors));
    CALL(tcaCollFree(coll));  // failed: freed locally
    if (team != TCA_TEAM_WORLD) CALL(tcaTeamFree(team));
    team = survivors;
    coll = make_allreduce(team, send, sum);
    // Survivors may have failed in different iterations: all redo the earliest.
    tcaCollConfig on_team{};
    on_team.team = team;
    int64_t resume = iteration;
    CALL(tcaAllreduce(&resume, &resume, 1, TCA_INT64, TCA_MIN, &on_team));
    const std::vector<int> world = team_members(team);
    std::string names;
    for (int w : world) names += " " + std::to_string(w);
    std::printf("survivor %d: shrunk to%s after %.1f s, resuming at iteration %lld\n", g_rank,
                names.c_str(), tca_test::seconds_since(g_start), static_cast<long long>(resume));
    iteration = static_cast<int>(resume);
  }
  // Every survivor has finished before any leaves, and each stays a moment after the barrier:
  // on ucx a peer's last flush to a rank that has left fails.
  CALL(tcaTeamBarrier(team));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::vector<int> world = team_members(team);
  std::vector<int> expected;
  for (int r = 0; r < size; ++r)
    if (!victim[r]) expected.push_back(r);
  const bool ok = world == expected && failures == static_cast<int>(deaths.size());
  std::printf("survivor %d: %s: %d iterations, %d failure(s), a team of %zu after %.1f s\n", g_rank,
              ok ? "finished" : "FAILED", kIterations, failures, world.size(),
              tca_test::seconds_since(g_start));
  std::fflush(stdout);
  std::_Exit(ok ? 0 : 1);
}
