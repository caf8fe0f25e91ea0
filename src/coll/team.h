// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Teams: ordered lists of world ranks that collectives span, and their control exchanges. A team
// is a local record; what its members exchange (split colours, handles, shrink votes) travels
// through each rank's control region (team_exchange.cc): a chained write into the peer's cell and
// a notification on TCA_TEAM_SLOT, so no exchange needs the bootstrap or a root rank.
#pragma once

#include <cstddef>
#include <vector>

#include "tca/tca_coll.h"

namespace tca::coll {

struct TeamView {
  tcaTeam id = TCA_TEAM_WORLD;
  std::vector<int> world;  // world rank of each team rank
  int me = 0;              // this rank's team rank
  int world_rank(int team_rank) const { return world[team_rank]; }
  int size() const { return static_cast<int>(world.size()); }
};

// The members of `team`; TCA_ERROR_INVALID_ARGUMENT for an unknown (or TCA_TEAM_INVALID) team.
tcaResult team_view(tcaTeam team, TeamView* out);
// Records a new team of these world ranks (this rank among them).
tcaResult team_add(std::vector<int> world, tcaTeam* out);
void team_forget(tcaTeam team);

// Makes this rank's control region and learns every rank's (collective over the world, through
// the bootstrap; once per job). Later exchanges need no bootstrap.
tcaResult ensure_control();
// Which job's control region is current: 0 when none, else a number that changes with each job.
unsigned control_generation();
// Collective over the team: all[r*bytes ..) receives team rank r's `mine`. The world team goes
// through the bootstrap unless `over_transports`.
tcaResult team_allgather(const TeamView& team, const void* mine, void* all, size_t bytes,
                         bool over_transports = false);
tcaResult team_allgather_handles(const TeamView& team, const tcaHandle* mine, tcaHandle* all);
tcaResult team_barrier(const TeamView& team);
// Collective over the team, for set-up whose local part (allocations, registrations) may fail on
// some members before an exchange the others would wait in: every member says how its part went.
// Returns `local` where it failed (its message kept), else the code of the lowest member whose
// part failed (the message names it), else success.
tcaResult team_agree(const TeamView& team, tcaResult local);
// One barrier over each distinct member list among `teams`: the world's first (through the
// bootstrap), then the others in the order of their member lists. Every rank takes the teams
// in that same order, so ranks that share several teams never wait on each other in a cycle;
// a rank with no teams returns at once.
tcaResult team_barriers(std::vector<TeamView> teams);
// As team_allgather over the transports, but a member whose write or notification fails (dead,
// or silent past the timeout) is marked in *failed (by team rank) instead of failing the call.
// Members already marked in *failed (when it holds a flag per member) are left out.
tcaResult team_allgather_tolerant(const TeamView& team, const void* mine, void* all, size_t bytes,
                                  std::vector<bool>* failed);

}  // namespace tca::coll
