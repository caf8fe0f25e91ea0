// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The teams' control exchanges. Every rank owns a control region of host memory: for each world
// rank two cells (by the parity of the exchanges that pair has made), then one staging cell.
// An exchange round writes this rank's cell into each member's region with a chain that notifies
// TCA_TEAM_SLOT, then waits for each member's notification and copies its cell out. A pair's
// rounds alternate cells: a rank writes round k+1 only after it received the peer's round k,
// which the peer sent after it had read round k-1 out of the same cell.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "coll/status.h"
#include "coll/team.h"

namespace tca::coll {
namespace {

constexpr size_t kMinCellBytes = 1024;  // two handles' worth

struct Control {
  bool ready = false;
  unsigned char* region = nullptr;
  tcaHandle own{};
  std::vector<tcaHandle> peers;  // every world rank's region
  std::vector<uint64_t> rounds;  // exchanges made with each world rank
  int rank = 0;
  int world = 1;
  size_t cell = kMinCellBytes;
  size_t staging() const { return 2 * static_cast<size_t>(world) * cell; }
  size_t cell_of(int writer, uint64_t round) const {
    return (static_cast<size_t>(round % 2) * world + writer) * cell;
  }
};

Control g_control;
unsigned g_generation = 0;  // regions made so far

bool control_current() {
  return g_control.ready && tcaHandleInfo(&g_control.own, nullptr, nullptr, nullptr) == TCA_SUCCESS;
}

// Writes `bytes` of `data` into this rank's cell at `peer` (world rank) and notifies it.
tcaResult send_cell(int peer, const void* data, size_t bytes) {
  Control& c = g_control;
  std::memcpy(c.region + c.staging(), data, bytes);
  tcaDesc chain = nullptr;
  TCA_CHECK(tcaDescNew(&chain));
  tcaResult result = tcaDescSetMemcpy(chain, &c.peers[peer], c.cell_of(c.rank, c.rounds[peer]),
                                      &c.own, c.staging(), bytes, TCA_FLAG_NOTIFY, TCA_TEAM_SLOT);
  if (result == TCA_SUCCESS) result = tcaDescSet(chain, TCA_COLL_CHANNEL);
  if (result == TCA_SUCCESS) result = tcaStartDMADesc(chain);
  if (result == TCA_SUCCESS) result = tcaWaitDMAC(TCA_COLL_CHANNEL);
  tcaDescFree(chain);
  return result;
}

// Waits for `peer`'s cell of this round and copies it out.
tcaResult receive_cell(int peer, void* data, size_t bytes) {
  Control& c = g_control;
  TCA_CHECK(tcaWaitDMARecvDesc(peer, TCA_TEAM_SLOT, nullptr));
  std::memcpy(data, c.region + c.cell_of(peer, c.rounds[peer]), bytes);
  ++c.rounds[peer];
  return TCA_SUCCESS;
}

// One exchange over the transports; with `failed` non-null a member that fails is marked there
// and left out of the rest (its cell in `all` stays as it was).
tcaResult exchange(const TeamView& team, const void* mine, void* all, size_t bytes,
                   std::vector<bool>* failed) {
  if (!control_current())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "teams' control exchange not set up: the first team call of a job is collective "
             "over TCA_TEAM_WORLD (tcaTeamSplit, tcaTeamCreate or tcaCollNew on it)");
  const auto* in = static_cast<const unsigned char*>(mine);
  auto* out = static_cast<unsigned char*>(all);
  const int n = team.size();
  for (size_t at = 0; at < bytes; at += g_control.cell) {
    const size_t part = std::min(g_control.cell, bytes - at);
    std::memcpy(out + team.me * bytes + at, in + at, part);
    for (int member = 0; member < n; ++member) {
      if (member == team.me || (failed != nullptr && (*failed)[member])) continue;
      const tcaResult sent = send_cell(team.world_rank(member), in + at, part);
      if (sent == TCA_SUCCESS) continue;
      if (failed == nullptr) return append_frame(sent, __FILE__, __LINE__);
      (*failed)[member] = true;
    }
    for (int member = 0; member < n; ++member) {
      if (member == team.me || (failed != nullptr && (*failed)[member])) continue;
      const tcaResult received =
          receive_cell(team.world_rank(member), out + member * bytes + at, part);
      if (received == TCA_SUCCESS) continue;
      if (failed == nullptr) return append_frame(received, __FILE__, __LINE__);
      (*failed)[member] = true;
    }
  }
  return TCA_SUCCESS;
}

}  // namespace

tcaResult ensure_control() {
  if (control_current()) return TCA_SUCCESS;
  Control c;  // a region of an earlier job went with its tcaFinalize
  TCA_CHECK(tcaRank(&c.rank));
  TCA_CHECK(tcaSize(&c.world));
  c.cell = std::max(kMinCellBytes, (static_cast<size_t>(c.world) + 7) / 8 * 8);
  const size_t bytes = c.staging() + c.cell;
  TeamView world;
  TCA_CHECK(team_view(TCA_TEAM_WORLD, &world));
  void* region = nullptr;
  tcaResult result = tcaMalloc(&region, bytes, TCA_MEM_CPU);
  c.region = static_cast<unsigned char*>(region);
  if (result == TCA_SUCCESS) {
    std::memset(c.region, 0, bytes);
    result = tcaCreateHandle(&c.own, c.region, bytes, TCA_MEM_CPU);
  }
  // A rank whose region failed still tells the others, who would wait for its handle.
  result = team_agree(world, result);
  c.peers.resize(c.world);
  if (result == TCA_SUCCESS) result = tcaAllgatherHandles(&c.own, c.peers.data());
  if (result != TCA_SUCCESS) {
    if (c.region != nullptr) {
      const ErrorKeeper keep;  // the failure's message, not the clean-up's
      tcaFree(c.region);
    }
    return append_frame(result, __FILE__, __LINE__);
  }
  c.rounds.assign(c.world, 0);
  c.ready = true;
  g_control = std::move(c);
  ++g_generation;
  return TCA_SUCCESS;
}

unsigned control_generation() { return control_current() ? g_generation : 0; }

tcaResult team_allgather(const TeamView& team, const void* mine, void* all, size_t bytes,
                         bool over_transports) {
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "a team exchange of 0 bytes");
  if (team.id == TCA_TEAM_WORLD && !over_transports) return tcaBootstrapAllgather(mine, all, bytes);
  if (team.size() == 1) {
    std::memcpy(all, mine, bytes);
    return TCA_SUCCESS;
  }
  return exchange(team, mine, all, bytes, nullptr);
}

tcaResult team_allgather_handles(const TeamView& team, const tcaHandle* mine, tcaHandle* all) {
  if (team.id == TCA_TEAM_WORLD) return tcaAllgatherHandles(mine, all);
  return team_allgather(team, mine, all, sizeof(tcaHandle));
}

tcaResult team_barrier(const TeamView& team) {
  if (team.id == TCA_TEAM_WORLD) return tcaBarrier();
  if (team.size() == 1) return TCA_SUCCESS;
  const unsigned char mine = 1;
  std::vector<unsigned char> all(team.size());
  return team_allgather(team, &mine, all.data(), 1);
}

tcaResult team_agree(const TeamView& team, tcaResult local) {
  if (team.size() == 1) return local;
  const std::string why = local != TCA_SUCCESS ? last_error_message() : std::string();
  const auto mine = static_cast<int32_t>(local);
  std::vector<int32_t> all(team.size());
  const tcaResult exchanged = team_allgather(team, &mine, all.data(), sizeof mine);
  if (local != TCA_SUCCESS) return adopt_error(local, why);  // a failed exchange is secondary
  TCA_CHECK(exchanged);
  for (int member = 0; member < team.size(); ++member) {
    const auto theirs = static_cast<tcaResult>(all[member]);
    if (theirs != TCA_SUCCESS)
      TCA_FAIL(theirs, "rank {} could not set up its part ({}); its own error says why",
               team.world_rank(member), tcaGetErrorString(theirs));
  }
  return TCA_SUCCESS;
}

tcaResult team_barriers(std::vector<TeamView> teams) {
  const auto world_first = [](const TeamView& a, const TeamView& b) {
    const bool a_world = a.id == TCA_TEAM_WORLD, b_world = b.id == TCA_TEAM_WORLD;
    return a_world != b_world ? a_world : !a_world && a.world < b.world;
  };
  const auto same = [](const TeamView& a, const TeamView& b) {
    return (a.id == TCA_TEAM_WORLD) == (b.id == TCA_TEAM_WORLD) && a.world == b.world;
  };
  std::sort(teams.begin(), teams.end(), world_first);
  teams.erase(std::unique(teams.begin(), teams.end(), same), teams.end());
  for (const TeamView& team : teams) TCA_CHECK(team_barrier(team));
  return TCA_SUCCESS;
}

tcaResult team_allgather_tolerant(const TeamView& team, const void* mine, void* all, size_t bytes,
                                  std::vector<bool>* failed) {
  if (failed->size() != static_cast<size_t>(team.size())) failed->assign(team.size(), false);
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "a team exchange of 0 bytes");
  std::memcpy(static_cast<unsigned char*>(all) + team.me * bytes, mine, bytes);
  if (team.size() == 1) return TCA_SUCCESS;
  return exchange(team, mine, all, bytes, failed);
}

}  // namespace tca::coll
