// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The teams' registry and the C API that makes, reads and frees teams.
#include "coll/team.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "coll/status.h"
#include "core/reserved.h"

namespace tca::coll {
namespace {

struct Record {
  std::vector<int> world;
  unsigned generation = 0;  // the job's control region it was made in
};

std::map<tcaTeam, Record> g_teams;
tcaTeam g_next_team = 1;

}  // namespace

tcaResult team_view(tcaTeam team, TeamView* out) {
  TeamView view;
  view.id = team;
  int rank = 0;
  TCA_CHECK(tcaRank(&rank));
  if (team == TCA_TEAM_WORLD) {
    int size = 0;
    TCA_CHECK(tcaSize(&size));
    view.world.resize(size);
    for (int r = 0; r < size; ++r) view.world[r] = r;
    view.me = rank;
    *out = std::move(view);
    return TCA_SUCCESS;
  }
  const auto found = g_teams.find(team);
  if (found == g_teams.end() || found->second.generation != control_generation())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "team {} is not a live team of this job", team);
  view.world = found->second.world;
  view.me =
      static_cast<int>(std::find(view.world.begin(), view.world.end(), rank) - view.world.begin());
  *out = std::move(view);
  return TCA_SUCCESS;
}

tcaResult team_add(std::vector<int> world, tcaTeam* out) {
  Record record;
  record.world = std::move(world);
  record.generation = control_generation();
  if (record.generation == 0) TCA_FAIL(TCA_ERROR_INTERNAL, "a team made without a control region");
  const tcaTeam id = g_next_team++;
  g_teams[id] = std::move(record);
  *out = id;
  return TCA_SUCCESS;
}

void team_forget(tcaTeam team) { g_teams.erase(team); }

}  // namespace tca::coll

using tca::coll::TeamView;

namespace {

// Checks a member list against the parent: distinct world ranks, each in the parent.
tcaResult check_members(const TeamView& parent, int count, const int* world_ranks) {
  if (count <= 0 || world_ranks == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "a team needs count > 0 ranks (count {}, list {})", count,
             static_cast<const void*>(world_ranks));
  std::vector<int> sorted(world_ranks, world_ranks + count);
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "world rank {} is listed twice",
             *std::adjacent_find(sorted.begin(), sorted.end()));
  for (int rank : sorted)
    if (std::find(parent.world.begin(), parent.world.end(), rank) == parent.world.end())
      TCA_FAIL(TCA_ERROR_INVALID_RANK, "world rank {} is not a member of team {}", rank, parent.id);
  return TCA_SUCCESS;
}

}  // namespace

extern "C" {

tcaResult tcaTeamSplit(tcaTeam parent, int color, int key, tcaTeam* team) {
  tca::ReservedScope reserved;  // teams exchange on tca's own slot and channel
  if (team == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "team is NULL");
  if (color < 0 && color != TCA_TEAM_NO_COLOR)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "color {} is negative (TCA_TEAM_NO_COLOR: no team)",
             color);
  if (parent == TCA_TEAM_WORLD) TCA_CHECK(tca::coll::ensure_control());
  TeamView view;
  TCA_CHECK(tca::coll::team_view(parent, &view));
  const int mine[2] = {color, key};
  std::vector<int> all(2 * view.size());
  TCA_CHECK(tca::coll::team_allgather(view, mine, all.data(), sizeof(mine), true));
  *team = TCA_TEAM_INVALID;
  if (color == TCA_TEAM_NO_COLOR) return TCA_SUCCESS;
  std::vector<std::tuple<int, int, int>> members;  // key, parent rank, world rank
  for (int r = 0; r < view.size(); ++r)
    if (all[2 * r] == color) members.emplace_back(all[2 * r + 1], r, view.world_rank(r));
  std::sort(members.begin(), members.end());
  std::vector<int> world;
  for (const auto& member : members) world.push_back(std::get<2>(member));
  return tca::coll::team_add(std::move(world), team);
}

tcaResult tcaTeamCreate(tcaTeam parent, int count, const int* world_ranks, tcaTeam* team) {
  tca::ReservedScope reserved;
  if (team == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "team is NULL");
  if (parent == TCA_TEAM_WORLD) TCA_CHECK(tca::coll::ensure_control());
  TeamView view;
  TCA_CHECK(tca::coll::team_view(parent, &view));
  TCA_CHECK(check_members(view, count, world_ranks));
  *team = TCA_TEAM_INVALID;
  const int me = view.world_rank(view.me);
  if (std::find(world_ranks, world_ranks + count, me) == world_ranks + count) return TCA_SUCCESS;
  return tca::coll::team_add(std::vector<int>(world_ranks, world_ranks + count), team);
}

tcaResult tcaTeamRank(tcaTeam team, int* rank) {
  if (rank == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "rank is NULL");
  TeamView view;
  TCA_CHECK(tca::coll::team_view(team, &view));
  *rank = view.me;
  return TCA_SUCCESS;
}

tcaResult tcaTeamSize(tcaTeam team, int* size) {
  if (size == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "size is NULL");
  TeamView view;
  TCA_CHECK(tca::coll::team_view(team, &view));
  *size = view.size();
  return TCA_SUCCESS;
}

tcaResult tcaTeamTranslateRank(tcaTeam from, int rank, tcaTeam to, int* to_rank) {
  if (to_rank == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "to_rank is NULL");
  TeamView source, target;
  TCA_CHECK(tca::coll::team_view(from, &source));
  TCA_CHECK(tca::coll::team_view(to, &target));
  if (rank < 0 || rank >= source.size())
    TCA_FAIL(TCA_ERROR_INVALID_RANK, "rank {} is outside team {} of {} ranks", rank, from,
             source.size());
  const auto found = std::find(target.world.begin(), target.world.end(), source.world_rank(rank));
  *to_rank = found == target.world.end() ? -1 : static_cast<int>(found - target.world.begin());
  return TCA_SUCCESS;
}

tcaResult tcaTeamBarrier(tcaTeam team) {
  tca::ReservedScope reserved;
  TeamView view;
  TCA_CHECK(tca::coll::team_view(team, &view));
  return tca::coll::team_barrier(view);
}

tcaResult tcaTeamFree(tcaTeam team) {
  if (team == TCA_TEAM_WORLD) return TCA_SUCCESS;
  TeamView view;
  TCA_CHECK(tca::coll::team_view(team, &view));
  tca::coll::team_forget(team);
  return TCA_SUCCESS;
}

}  // extern "C"
