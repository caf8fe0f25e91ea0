// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Seeded randomized soak: rounds of mixed chains (1D and 2D transfers of random sizes and
// offsets, notifications in the middle and at the end, pushes and pulls, immediate puts and
// gets) between random peers, every byte of every destination checked. Every rank derives the
// same plan from the seed, so each knows what it must receive. Runs for a few seconds.

#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "test_util.h"

namespace tca_test {
namespace {

constexpr uint64_t kSoakSeed = 0x7ca5eed;
constexpr double kBudgetSeconds = 3.0;
constexpr int kMinRounds = 3;
constexpr int kMaxRounds = 100000;
constexpr size_t kSrcBytes = 256 * kKiB;
constexpr size_t kSegmentBytes = 64 * kKiB;  // a destination's share per writer, see below
constexpr int kSoakSlots = 8;

struct PlannedTransfer {
  Copy copy;
  bool notify = false;
  int slot = 0;
};

struct PlannedChain {
  int owner = 0;           // builds and starts it
  int peer = 0;            // the other end
  bool pull = false;       // destination at the owner, source at the peer (the pseudo-read)
  bool immediate = false;  // tcaPut / tcaGet calls (and a tcaNotify) instead of a descriptor
  int channel = 0;
  std::vector<PlannedTransfer> transfers;
  int dst_rank() const { return pull ? owner : peer; }
  int src_rank() const { return pull ? peer : owner; }
};

// Each rank's destination region holds 2 * size segments: segment s receives what rank s
// pushes, segment size + s what this rank pulls from rank s. Transfers within a segment are
// laid out one after the other, so no two writes of a round overlap and every byte's final
// value is known.
class SoakPlanner {
 public:
  SoakPlanner(int size, uint64_t seed) : size_(size), rng_(seed) {}

  std::vector<PlannedChain> plan_round() {
    // cursor[receiver * 2 * size + segment]: the segment's first byte not yet written.
    std::vector<size_t> cursor;
    for (int receiver = 0; receiver < size_; ++receiver)
      for (int segment = 0; segment < 2 * size_; ++segment)
        cursor.push_back(segment * kSegmentBytes);
    std::vector<PlannedChain> chains;
    for (int owner = 0; owner < size_; ++owner) {
      const int count = 1 + static_cast<int>(below(3));
      for (int c = 0; c < count; ++c) {
        PlannedChain chain;
        chain.owner = owner;
        chain.peer = static_cast<int>(below(size_));
        chain.pull = below(10) < 3;
        chain.immediate = below(10) < 2;
        chain.channel = static_cast<int>(below(TCA_USER_DMA_CHANNELS));
        const int segment = chain.pull ? size_ + chain.peer : owner;
        size_t& next_free = cursor[static_cast<size_t>(chain.dst_rank()) * 2 * size_ + segment];
        const size_t segment_end = (segment + 1) * kSegmentBytes;
        const int length = 1 + static_cast<int>(below(chain.immediate ? 4 : 6));
        for (int t = 0; t < length; ++t) {
          PlannedTransfer transfer;
          transfer.copy = random_copy(next_free + below(8), !chain.immediate);
          if (transfer.copy.dst_end() > segment_end) break;
          next_free = transfer.copy.dst_end();
          transfer.notify = below(5) == 0;
          transfer.slot = static_cast<int>(below(kSoakSlots));
          chain.transfers.push_back(transfer);
        }
        if (chain.transfers.empty()) continue;
        chain.transfers.back().notify = true;  // the receiver must learn the chain is done
        if (chain.immediate) {
          // Puts announce themselves with one tcaNotify at the end; gets need no notice.
          for (PlannedTransfer& transfer : chain.transfers) transfer.notify = false;
          chain.transfers.back().notify = !chain.pull;
        }
        chains.push_back(chain);
      }
    }
    return chains;
  }

 private:
  uint64_t below(uint64_t bound) { return rng_() % bound; }

  Copy random_copy(size_t dst_offset, bool may_be_strided) {
    if (may_be_strided && below(10) < 3) {
      const size_t width = 1 + below(200);
      const size_t count = 1 + below(40);
      const size_t dst_pitch = width + below(64);
      const size_t src_pitch = width + below(64);
      const size_t src_extent = (count - 1) * src_pitch + width;
      return Copy::strided(dst_offset, dst_pitch, below(kSrcBytes - src_extent), src_pitch, width,
                           count);
    }
    const size_t bytes = 1 + below(size_t{1} << below(15));  // sizes spread over 1 B .. 16 KiB
    return Copy::linear(dst_offset, below(kSrcBytes - bytes), bytes);
  }

  int size_;
  std::mt19937_64 rng_;  // same binary on every rank: the same sequence everywhere
};

// Starts this rank's chains of the round; descriptors stay alive in `descs` until the end.
void start_own_chains(const std::vector<PlannedChain>& chains, int rank, tcaPath path,
                      const SharedRegion& src, const SharedRegion& dst,
                      std::vector<std::unique_ptr<Desc>>& descs, std::vector<bool>& channel_used) {
  for (const PlannedChain& chain : chains) {
    if (chain.owner != rank) continue;
    const tcaHandle& dst_handle = dst.of(chain.dst_rank());
    const tcaHandle& src_handle = src.of(chain.src_rank());
    if (chain.immediate) {
      for (const PlannedTransfer& transfer : chain.transfers) {
        const Copy& copy = transfer.copy;
        if (chain.pull) {
          ASSERT_TCA_OK(
              tcaGet(dst.data() + copy.dst_offset, &src_handle, copy.src_offset, copy.width));
        } else {
          ASSERT_TCA_OK(
              tcaPut(&dst_handle, copy.dst_offset, src.data() + copy.src_offset, copy.width));
        }
      }
      if (chain.transfers.back().notify) {
        ASSERT_TCA_OK(tcaNotify(chain.peer, chain.transfers.back().slot));
      }
      continue;
    }
    descs.push_back(std::make_unique<Desc>());
    const tcaDesc desc = descs.back()->get();
    for (const PlannedTransfer& transfer : chain.transfers) {
      ASSERT_TCA_OK(append_copy(desc, dst_handle, src_handle, transfer.copy,
                                transfer.notify ? TCA_FLAG_NOTIFY : 0u, transfer.slot));
    }
    ASSERT_TCA_OK(tcaDescSetPath(desc, path));
    ASSERT_TCA_OK(tcaDescSet(desc, chain.channel));
    ASSERT_TCA_OK(tcaStartDMADesc(desc));
    channel_used[chain.channel] = true;
  }
}

// Consumes every notification this rank is owed in the round: then all its data is there.
void await_notifications(const std::vector<PlannedChain>& chains, int rank) {
  for (const PlannedChain& chain : chains) {
    if (chain.dst_rank() != rank) continue;
    for (const PlannedTransfer& transfer : chain.transfers) {
      if (!transfer.notify) continue;
      int from = -1;
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(chain.owner, transfer.slot, &from));
      ASSERT_EQ(from, chain.owner);
    }
  }
}

TEST_P(TransportTest, RandomizedChainsBetweenRandomPeers) {
  SharedRegion src(kSrcBytes);
  SharedRegion dst(kSegmentBytes * 2 * size_);
  ASSERT_TRUE(src.ok() && dst.ok());
  SoakPlanner planner(size_, kSoakSeed);
  const double start = now_seconds();
  int rounds = 0;
  size_t chains_run = 0;
  for (int keep_going = 1; keep_going; ++rounds) {
    SCOPED_TRACE(::testing::Message() << "soak seed " << kSoakSeed << ", round " << rounds);
    const uint64_t round_seed = kSoakSeed + rounds;
    const std::vector<PlannedChain> chains = planner.plan_round();
    chains_run += chains.size();
    poison(dst.data(), dst.size());
    fill_pattern(src.data(), src.size(), Pattern{rank_, round_seed}, 0);
    ASSERT_TCA_OK(tcaBarrier());

    std::vector<std::unique_ptr<Desc>> descs;
    std::vector<bool> channel_used(TCA_USER_DMA_CHANNELS, false);
    ASSERT_NO_FATAL_FAILURE(start_own_chains(chains, rank_, path(), src, dst, descs, channel_used));
    for (int channel = 0; channel < TCA_USER_DMA_CHANNELS; ++channel) {
      if (channel_used[channel]) {
        ASSERT_TCA_OK(tcaWaitDMAC(channel));
      }
    }
    ASSERT_NO_FATAL_FAILURE(await_notifications(chains, rank_));

    ExpectedImage expected(0, dst.size());
    for (const PlannedChain& chain : chains) {
      if (chain.dst_rank() != rank_) continue;
      for (const PlannedTransfer& transfer : chain.transfers)
        expected.apply(transfer.copy, Pattern{chain.src_rank(), round_seed});
    }
    ASSERT_TRUE(expected.matches(dst.data()));
    // Sources are refilled only after every reader of this round is done.
    ASSERT_TCA_OK(tcaBarrier());

    // Rank 0's clock decides for everyone, so all ranks run the same number of rounds.
    keep_going = rounds + 1 < kMinRounds ||
                 (rounds + 1 < kMaxRounds && seconds_since(start) < kBudgetSeconds);
    ASSERT_TCA_OK(tcaBootstrapBroadcast(&keep_going, sizeof keep_going, 0));
  }
  if (rank_ == 0)
    std::printf("[   soak   ] %s: %d rounds, %zu chains over %d rank(s)\n", GetParam().c_str(),
                rounds, chains_run, size_);
}

}  // namespace
}  // namespace tca_test
