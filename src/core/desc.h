// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// DMA descriptors: a chain of validated transfers, prepared per transport when bound to a
// channel (tcaDescSet), then only kicked.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "tca/tca.h"
#include "transport/transport.h"

namespace tca::observe {
struct Cell;
// What one kick of a bound chain adds to one counter cell: the chain's transfers, bytes and
// notifications of that peer x transport x direction, summed when it is bound (tcaDescSet).
struct ChainCount {
  Cell* cell = nullptr;
  uint64_t transfers = 0;
  uint64_t bytes = 0;
  uint64_t notifications = 0;
};
// A bound chain's distinct peers as a timed kick copies them: up to kPeers, else count -1 (the
// drain looks the chain up by its token).
struct KickPeers {
  static constexpr int kPeers = 4;
  int count = 0;
  int peers[kPeers] = {};
};
}  // namespace tca::observe

struct tcaDesc_st {
  tcaPath path = TCA_PATH_AUTO;
  std::vector<tca::Transfer> transfers;
  // Set by tcaDescSet; cleared by any later append.
  int channel = -1;
  std::vector<std::unique_ptr<tca::PreparedRun>> runs;
  std::vector<tca::Transport*> run_transports;
  std::vector<tca::Transport*> transfer_transports;  // per transfer (counters, state dumps)
  std::vector<const tca::PeerRegion*> own_regions;   // checked for liveness at every kick
  // The observer's (src/core/observe/), set by tcaDescSet where counters are on: the counts per
  // cell and the distinct peers (chain latency; the first few also as a timed kick copies them);
  // the kicks not yet added to the cells (they are when the counters are read or reset, and
  // before the chain is bound again or freed); the coarse time of the last observed kick (apart
  // from unadded_kicks: side by side, GCC packs a kick's two stores into a longer vector store).
  std::vector<tca::observe::ChainCount> counts;
  std::vector<int> peers;
  uint64_t unadded_kicks = 0;
  tca::observe::KickPeers kick_peers;
  uint64_t kicked_ns = 0;
};

namespace tca {

class Context;

// Owns every descriptor of a context so that a stale or forged tcaDesc is detected.
// A tcaDesc is a token, never an address: tokens are not reused, so a copy of a freed
// descriptor stays invalid even after new descriptors are made.
class DescRegistry {
 public:
  tcaResult create(tcaDesc* out);
  tcaResult find(tcaDesc desc, tcaDesc_st** out) const;
  tcaResult destroy(Context& context, tcaDesc desc);
  // Calls f(token, descriptor) for every live descriptor (state dumps).
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [token, desc] : descs_) f(token, *desc);
  }

 private:
  std::unordered_map<uintptr_t, std::unique_ptr<tcaDesc_st>> descs_;
  uintptr_t next_token_ = 0;
};

tcaResult desc_append(Context& context, tcaDesc_st& desc, const tcaHandle* dst, uint64_t dst_offset,
                      uint64_t dst_pitch, const tcaHandle* src, uint64_t src_offset,
                      uint64_t src_pitch, uint64_t width, uint64_t count, unsigned flags, int slot);
tcaResult desc_bind(Context& context, tcaDesc_st& desc, int channel);
tcaResult desc_start(Context& context, tcaDesc_st& desc);
// Fails with TCA_ERROR_FREED_HANDLE when a region of this rank that the chain uses was freed.
tcaResult check_own_regions_alive(Context& context, const tcaDesc_st& desc);
// Runs one transfer to completion (tcaPut, tcaGet).
tcaResult run_immediate(Context& context, Transfer transfer);
// Checks that [offset, offset + (count-1)*pitch + width) lies inside `region`.
tcaResult check_extent(const PeerRegion& region, const char* end, uint64_t offset, uint64_t pitch,
                       uint64_t width, uint64_t count);

}  // namespace tca
