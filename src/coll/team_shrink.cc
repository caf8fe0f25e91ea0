// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tcaTeamShrink: the survivors of a team agree on who is alive, over the transports only.
//
// Rounds of a tolerant exchange: each live member sends its view (one byte per team rank: alive
// or not) to every member it still counts alive; a member whose write or notification fails is
// dead for this rank, and a member that any received view counts dead is dead too. The rounds end
// when a round brought no failure and every view received equals this rank's: then every live
// member received the same views in that round and ends with it, with the same list. A member
// dying during that last round can still split the survivors' answers (agreement with failures
// during the agreement itself needs more rounds than this bounded protocol makes).
#include <algorithm>
#include <cstdint>

#include "coll/status.h"
#include "coll/team.h"
#include "core/reserved.h"

namespace {

using tca::coll::TeamView;

// Drops the notifications that failed collectives left from `peer` on the collectives' slots:
// the agreement's last round came after every survivor had stopped them, and a sender's
// notifications become visible in the order it raised them.
tcaResult drop_stale_notifications(int peer) {
  for (int slot = TCA_COLL_FIRST_SLOT; slot < TCA_TEAM_SLOT; ++slot) {
    int arrived = 1;
    while (arrived) TCA_CHECK(tcaTestDMARecvDesc(peer, slot, &arrived, nullptr));
  }
  return TCA_SUCCESS;
}

// Runs of the failed collectives left on the collectives' channel: each one that touched a dead
// rank fails its drain once (then the channel forgets it; on ucx a flush to a dead endpoint
// fails), so that the agreement's drains afterwards wait for its own writes only.
void drain_failed_runs() {
  for (int run = 0; run < 4096; ++run)
    if (tcaWaitDMAC(TCA_COLL_CHANNEL) != TCA_ERROR_PEER_FAILED) break;
  tca::clear_last_error();  // what failed there was the failure being recovered from
}

// The timeout for the agreement's waits: a survivor may still sit in a failed collective's wait
// for one timeout before it arrives.
class LongerTimeout {
 public:
  LongerTimeout() {
    if (tcaGetTimeout(&saved_) == TCA_SUCCESS && saved_ > 0) tcaSetTimeout(2 * saved_);
  }
  ~LongerTimeout() {
    if (saved_ > 0) tcaSetTimeout(saved_);
  }
  LongerTimeout(const LongerTimeout&) = delete;
  LongerTimeout& operator=(const LongerTimeout&) = delete;

 private:
  int saved_ = 0;
};

tcaResult agree(const TeamView& view, std::vector<uint8_t>* alive) {
  const int n = view.size();
  alive->assign(n, 1);
  std::vector<uint8_t> views(static_cast<size_t>(n) * n);
  for (int round = 0; round <= n; ++round) {
    std::vector<bool> failed(n);  // members already counted dead are left out
    for (int member = 0; member < n; ++member) failed[member] = !(*alive)[member];
    TCA_CHECK(tca::coll::team_allgather_tolerant(view, alive->data(), views.data(), n, &failed));
    bool settled = true;
    std::vector<uint8_t> next = *alive;
    for (int member = 0; member < n; ++member) {
      if (!(*alive)[member] || member == view.me) continue;
      if (failed[member]) {
        next[member] = 0;
        settled = false;
        continue;
      }
      const uint8_t* theirs = views.data() + static_cast<size_t>(member) * n;
      if (!std::equal(theirs, theirs + n, alive->begin())) settled = false;
      for (int other = 0; other < n; ++other) next[other] &= theirs[other];
    }
    *alive = next;
    if (!(*alive)[view.me])
      TCA_FAIL(TCA_ERROR_PEER_FAILED,
               "the other survivors of team {} count this rank (team rank {}) as dead", view.id,
               view.me);
    if (settled) return TCA_SUCCESS;
  }
  TCA_FAIL(TCA_ERROR_PEER_FAILED, "team {}: members kept failing for {} rounds of agreement",
           view.id, n + 1);
}

}  // namespace

extern "C" tcaResult tcaTeamShrink(tcaTeam team, tcaTeam* survivors) {
  tca::ReservedScope reserved;  // teams exchange on tca's own slot and channel
  if (survivors == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "survivors is NULL");
  if (tca::coll::control_generation() == 0)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "no team exchange was set up before the failure: make a collective or a team over "
             "TCA_TEAM_WORLD first");
  TeamView view;
  TCA_CHECK(tca::coll::team_view(team, &view));
  std::vector<uint8_t> alive;
  drain_failed_runs();
  {
    LongerTimeout longer;
    TCA_CHECK(agree(view, &alive));
  }
  std::vector<int> world;
  for (int member = 0; member < view.size(); ++member)
    if (alive[member]) world.push_back(view.world_rank(member));
  for (int peer : world)
    if (peer != view.world_rank(view.me)) TCA_CHECK(drop_stale_notifications(peer));
  tcaTeam made = TCA_TEAM_INVALID;
  TCA_CHECK(tca::coll::team_add(world, &made));
  // No survivor starts a collective on the new team before every survivor has dropped the old
  // notifications.
  TeamView next;
  TCA_CHECK(tca::coll::team_view(made, &next));
  const tcaResult synced = tca::coll::team_barrier(next);
  if (synced != TCA_SUCCESS) {
    tca::coll::team_forget(made);
    return tca::append_frame(synced, __FILE__, __LINE__);
  }
  *survivors = made;
  return TCA_SUCCESS;
}
