// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// One-shot collectives: a small cache of persistent collectives on internal buffers, keyed by
// everything but the user's buffers. Every rank makes the same calls in the same order, so
// every rank hits, misses and evicts alike (creation and eviction are collective).
#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "coll/collective.h"
#include "coll/status.h"
#include "core/reserved.h"

namespace {

constexpr size_t kCachedCollectives = 16;

using Key = std::tuple<int, int, int, size_t, int, int, int, int, int, int>;

Key key_of(tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
           const tcaCollConfig& config) {
  const int reduction = kind == TCA_COLL_ALLREDUCE ? op : TCA_SUM;  // allgather ignores it
  return {kind,
          type,
          reduction,
          count,
          config.algorithm,
          config.memory,
          config.topology.kind,
          config.topology.dims[0],
          config.topology.dims[1],
          config.team};
}

struct Entry {
  Key key;
  std::unique_ptr<tcaColl_st> coll;
  void* send = nullptr;  // tcaMalloc'd, of the configured memory kind
  void* recv = nullptr;
  uint64_t last_use = 0;
};

std::vector<Entry> g_cache;
uint64_t g_uses = 0;

// After a tcaFinalize every cached object's memory is gone with the job: forget them all.
void drop_entries_of_finished_jobs() {
  if (!g_cache.empty() && !g_cache.front().coll->belongs_to_current_job()) g_cache.clear();
}

// Local part of releasing an entry (the caller has passed a barrier).
tcaResult release(Entry& entry) {
  tcaResult result = entry.coll->release();
  for (void* buffer : {entry.send, entry.recv}) {
    const tcaResult freed = tcaFree(buffer);
    if (result == TCA_SUCCESS) result = freed;
  }
  return result;
}

tcaResult make_entry(const Key& key, tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
                     const tcaCollConfig& config, size_t send_bytes, size_t recv_bytes,
                     Entry* out) {
  Entry entry;
  entry.key = key;
  TCA_CHECK(tcaMalloc(&entry.send, send_bytes, config.memory));
  tcaResult result = tcaMalloc(&entry.recv, recv_bytes, config.memory);
  if (result == TCA_SUCCESS)
    result = tcaColl_st::create(kind, type, op, count, entry.send, entry.recv, config, &entry.coll);
  if (result != TCA_SUCCESS) {
    tcaFree(entry.send);
    tcaFree(entry.recv);
    return tca::append_frame(result, __FILE__, __LINE__);
  }
  *out = std::move(entry);
  return TCA_SUCCESS;
}

tcaResult cached_entry(tcaCollKind kind, tcaDataType type, tcaRedOp op, size_t count,
                       const tcaCollConfig& config, size_t send_bytes, size_t recv_bytes,
                       Entry** out) {
  drop_entries_of_finished_jobs();
  const Key key = key_of(kind, type, op, count, config);
  auto found = std::find_if(g_cache.begin(), g_cache.end(),
                            [&key](const Entry& entry) { return entry.key == key; });
  if (found == g_cache.end()) {
    // Each team's entries are counted and evicted apart: a team's members make the same calls
    // on it, whatever other teams each of them belongs to.
    const auto same_team = [&config](const Entry& entry) {
      return std::get<9>(entry.key) == config.team;
    };
    if (static_cast<size_t>(std::count_if(g_cache.begin(), g_cache.end(), same_team)) ==
        kCachedCollectives) {
      auto oldest = g_cache.end();
      for (auto it = g_cache.begin(); it != g_cache.end(); ++it)
        if (same_team(*it) && (oldest == g_cache.end() || it->last_use < oldest->last_use))
          oldest = it;
      // No peer still writes into the evicted buffers.
      TCA_CHECK(tca::coll::team_barrier(oldest->coll->team()));
      const tcaResult released = release(*oldest);
      g_cache.erase(oldest);
      TCA_CHECK(released);
    }
    Entry entry;
    TCA_CHECK(make_entry(key, kind, type, op, count, config, send_bytes, recv_bytes, &entry));
    g_cache.push_back(std::move(entry));
    found = g_cache.end() - 1;
  }
  found->last_use = ++g_uses;
  *out = &*found;
  return TCA_SUCCESS;
}

tcaResult one_shot(tcaCollKind kind, const void* sendbuf, void* recvbuf, size_t count,
                   tcaDataType type, tcaRedOp op, const tcaCollConfig* config_or_null) {
  const tcaCollConfig config = config_or_null != nullptr ? *config_or_null : tcaCollConfig{};
  tca::coll::TeamView team;
  TCA_CHECK(tca::coll::team_view(config.team, &team));
  const int rank = team.me;
  const int ranks = team.size();
  bool in_place = false;  // copying in and out makes both forms the same here
  TCA_CHECK(tca::coll::check_arguments(kind, type, op, count, sendbuf, recvbuf, config, rank, ranks,
                                       &in_place));
  if (count == 0) return TCA_SUCCESS;
  const size_t send_bytes = count * tcaDataTypeSize(type);
  const size_t recv_bytes = kind == TCA_COLL_ALLGATHER ? send_bytes * ranks : send_bytes;
  Entry* entry = nullptr;
  TCA_CHECK(cached_entry(kind, type, op, count, config, send_bytes, recv_bytes, &entry));
  tcaColl_st& coll = *entry->coll;
  TCA_CHECK(coll.copy_local(entry->send, sendbuf, send_bytes));
  TCA_CHECK(coll.start());
  bool done = false;
  TCA_CHECK(coll.progress(true, &done));
  return coll.copy_local(recvbuf, entry->recv, recv_bytes);
}

}  // namespace

extern "C" {

tcaResult tcaAllreduce(const void* sendbuf, void* recvbuf, size_t count, tcaDataType type,
                       tcaRedOp op, const tcaCollConfig* config) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  return one_shot(TCA_COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, config);
}

tcaResult tcaAllgather(const void* sendbuf, void* recvbuf, size_t count, tcaDataType type,
                       const tcaCollConfig* config) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  return one_shot(TCA_COLL_ALLGATHER, sendbuf, recvbuf, count, type, TCA_SUM, config);
}

tcaResult tcaCollReleaseCache(void) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  drop_entries_of_finished_jobs();
  if (g_cache.empty()) return TCA_SUCCESS;
  // No peer still writes into the cached buffers: a barrier over each team with entries here
  // (not over the world, which ranks outside those teams would never join).
  std::vector<tca::coll::TeamView> teams;
  for (const Entry& entry : g_cache) teams.push_back(entry.coll->team());
  TCA_CHECK(tca::coll::team_barriers(std::move(teams)));
  tcaResult result = TCA_SUCCESS;
  for (Entry& entry : g_cache) {
    const tcaResult released = release(entry);
    if (result == TCA_SUCCESS) result = released;
  }
  g_cache.clear();
  return result;
}

}  // extern "C"
