// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Data movement on every transport: sizes and offsets, block-stride, halo faces, chains,
// repeated kicks, puts, gets and user memory. Every destination starts poisoned and is
// compared byte for byte with a reference model, guard bytes included.
#include <cstdlib>
#include <string>
#include <vector>

#include "test_util.h"

namespace tca_test {
namespace {

INSTANTIATE_TEST_SUITE_P(Transports, TransportTest, ::testing::Values("shm", "mpi"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST_P(TransportTest, EveryPeerIsReachableOnTheForcedTransport) {
  for (int peer = 0; peer < size_; ++peer) {
    int available = 0;
    ASSERT_TCA_OK(tcaPathAvailable(path(), peer, &available));
    EXPECT_EQ(available, 1) << "peer " << peer;
    const char* name = nullptr;
    ASSERT_TCA_OK(tcaPeerTransport(peer, &name));
    ASSERT_NE(name, nullptr);
    EXPECT_EQ(std::string(name), GetParam()) << "peer " << peer;
  }
}

// With TCA_HOST_ID=cyclic:2 (as the fake-host runs set it) ranks of unlike parity are on other
// hosts as tca sees them: shared memory does not reach them, a path between hosts does.
TEST_P(TransportTest, FakeHostsKeepSharedMemoryInsideAHost) {
  const char* host_id = std::getenv("TCA_HOST_ID");
  if (host_id == nullptr || std::string(host_id) != "cyclic:2")
    GTEST_SKIP() << "runs under TCA_HOST_ID=cyclic:2";
  for (int peer = 0; peer < size_; ++peer) {
    const bool same_host = peer % 2 == rank_ % 2;
    int shm = -1;
    ASSERT_TCA_OK(tcaPathAvailable(TCA_PATH_SHM, peer, &shm));
    EXPECT_EQ(shm, same_host ? 1 : 0) << "peer " << peer;
    const char* name = nullptr;
    ASSERT_TCA_OK(tcaPeerTransport(peer, &name));
    if (!same_host) {
      EXPECT_NE(std::string(name), "shm") << "peer " << peer;
    }
  }
}

TEST_P(TransportTest, HandleInfoReportsOwnerSizeAndKind) {
  SharedRegion region(4097);
  ASSERT_TRUE(region.ok());
  for (int owner = 0; owner < size_; ++owner) {
    int reported_owner = -1;
    size_t bytes = 0;
    tcaMemKind kind = TCA_MEM_GPU;
    ASSERT_TCA_OK(tcaHandleInfo(&region.of(owner), &reported_owner, &bytes, &kind));
    EXPECT_EQ(reported_owner, owner);
    EXPECT_EQ(bytes, 4097u);
    EXPECT_EQ(kind, TCA_MEM_CPU);
  }
}

// ---- sizes 1 B .. 64 MiB with odd offsets at both ends ----

constexpr size_t kSweepMax = 64 * kMiB;
const std::vector<SweepCase> kSweep = {
    {1, 0, 0},       {1, 7, 3},       {3, 1, 6},      {7, 5, 2},         {63, 3, 1},
    {4095, 1, 4097}, {4097, 4095, 1}, {65537, 13, 7}, {kMiB + 13, 9, 5}, {kSweepMax, 3, 5},
};

void sweep_sizes(Method method, tcaPath path) {
  SharedRegion src(sweep_src_bytes(kSweep));
  SharedRegion dst(sweep_dst_bytes(kSweep));
  ASSERT_TRUE(src.ok() && dst.ok());
  run_sweep(method, path, kSweep, src, dst);
}

TEST_P(TransportTest, SizesAndOddOffsetsByDescriptorPush) {
  sweep_sizes(Method::kDescPush, path());
}
TEST_P(TransportTest, SizesAndOddOffsetsByDescriptorPull) {
  sweep_sizes(Method::kDescPull, path());
}
TEST_P(TransportTest, SizesAndOddOffsetsByPut) { sweep_sizes(Method::kPut, path()); }
TEST_P(TransportTest, SizesAndOddOffsetsByGet) { sweep_sizes(Method::kGet, path()); }

// ---- block-stride ----

TEST_P(TransportTest, BlockStrideWithDifferentPitches) {
  SharedRegion src(256 * kKiB);
  SharedRegion dst(256 * kKiB);
  ASSERT_TRUE(src.ok() && dst.ok());
  // {dst offset, dst pitch, src offset, src pitch, width, count}
  const std::vector<Copy> cases = {
      Copy::strided(5, 100, 3, 37, 13, 1),        // one block through the 2D call
      Copy::strided(1, 29, 0, 13, 13, 64),        // dense source, sparse destination
      Copy::strided(0, 13, 7, 29, 13, 64),        // sparse source, dense destination
      Copy::strided(3, 3, 1, 1, 1, 1000),         // single bytes
      Copy::strided(9, 4100, 11, 5000, 4097, 9),  // blocks wider than a page
      Copy::strided(2, 7, 5, 11, 7, 333),         // pitch equal to width on the destination
      Copy::strided(17, 1031, 6, 517, 515, 201),  // odd everything
  };
  run_each_copy(path(), cases, src, dst);
}

TEST_P(TransportTest, HaloFacesInEveryOrientation) {
  const Grid grid{6, 5, 7, 3};  // 3-byte cells: no width is a multiple of 8
  SharedRegion src(grid.bytes());
  SharedRegion dst(grid.bytes());
  ASSERT_TRUE(src.ok() && dst.ok());
  uint64_t seed = 200;
  for (Method method : {Method::kDescPush, Method::kDescPull}) {
    for (const auto& face : grid.ghost_faces()) {
      SCOPED_TRACE(::testing::Message() << method_name(method) << ", face " << face.first);
      ASSERT_NO_FATAL_FAILURE(
          run_ring_exchange(method, path(), {face.second}, src, dst, seed++, 0, dst.size()));
    }
  }
}

// ---- chains ----

TEST_P(TransportTest, ChainsOfOneToManyTransfers) {
  constexpr size_t kRegionBytes = 512 * kKiB;
  SharedRegion src(kRegionBytes);
  SharedRegion dst(kRegionBytes);
  ASSERT_TRUE(src.ok() && dst.ok());
  uint64_t seed = 300;
  for (Method method : {Method::kDescPush, Method::kDescPull}) {
    for (size_t length : {1, 2, 3, 16, 255, 1024}) {
      SCOPED_TRACE(::testing::Message() << method_name(method) << ", chain of " << length);
      ASSERT_NO_FATAL_FAILURE(run_ring_exchange(method, path(), chain_layout(length, kRegionBytes),
                                                src, dst, seed++, 0, dst.size()));
    }
  }
}

TEST_P(TransportTest, ManySmallPutsThenOneNotifyAndManySmallGets) {
  SharedRegion src(64 * kKiB);
  SharedRegion dst(64 * kKiB);
  ASSERT_TRUE(src.ok() && dst.ok());
  std::vector<Copy> stores;
  for (size_t i = 0, offset = 3; i < 200; ++i) {
    const size_t bytes = 1 + i % 16;
    stores.push_back(Copy::linear(offset, (i * 131) % 60000, bytes));
    offset += bytes + i % 5;
  }
  ASSERT_NO_FATAL_FAILURE(
      run_ring_exchange(Method::kPut, path(), stores, src, dst, 400, 0, dst.size()));
  ASSERT_NO_FATAL_FAILURE(
      run_ring_exchange(Method::kGet, path(), stores, src, dst, 401, 0, dst.size()));
}

// One chain set up once and kicked every iteration while its source changes. Push: the
// sender refills and kicks, the receiver checks, re-poisons and acknowledges. Pull: the
// owner refills and announces, the reader kicks its own chain, checks and acknowledges.
void kick_one_chain_repeatedly(Method method, tcaPath path, int rank, int next, int prev) {
  constexpr int kIterations = 25;
  constexpr int kChannel = 2;
  constexpr int kDataSlot = 5;
  constexpr int kReadySlot = 6;
  constexpr int kAckSlot = 7;
  SharedRegion src(64 * kKiB);
  SharedRegion dst(64 * kKiB);
  ASSERT_TRUE(src.ok() && dst.ok());
  const std::vector<Copy> chain = {
      Copy::linear(1, 0, 4097),
      Copy::strided(5000, 61, 4200, 17, 17, 100),
      Copy::linear(20000, 9000, 1),
      Copy::linear(20003, 11000, 30001),
  };
  const bool push = method == Method::kDescPush;
  Desc desc;
  for (size_t i = 0; i < chain.size(); ++i) {
    const unsigned flags = i + 1 == chain.size() ? TCA_FLAG_NOTIFY : 0u;
    ASSERT_TCA_OK(append_copy(desc.get(), push ? dst.of(next) : dst.mine(),
                              push ? src.mine() : src.of(prev), chain[i], flags, kDataSlot));
  }
  ASSERT_TCA_OK(tcaDescSetPath(desc.get(), path));
  ASSERT_TCA_OK(tcaDescSet(desc.get(), kChannel));
  poison(dst.data(), dst.size());
  ASSERT_TCA_OK(tcaBarrier());

  for (int iteration = 0; iteration < kIterations; ++iteration) {
    SCOPED_TRACE(::testing::Message() << method_name(method) << ", iteration " << iteration);
    const uint64_t seed = 500 + iteration;
    // The previous round's reader of my source has acknowledged (or this is round 0).
    if (iteration > 0) {
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(next, kAckSlot, nullptr));
    }
    fill_pattern(src.data(), src.size(), Pattern{rank, seed}, 0);
    if (push) {
      ASSERT_TCA_OK(tcaStartDMADesc(desc.get()));
      ASSERT_TCA_OK(tcaWaitDMAC(kChannel));
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev, kDataSlot, nullptr));
    } else {
      ASSERT_TCA_OK(tcaNotify(next, kReadySlot));
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev, kReadySlot, nullptr));
      ASSERT_TCA_OK(tcaStartDMADesc(desc.get()));
      ASSERT_TCA_OK(tcaWaitDMAC(kChannel));
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(rank, kDataSlot, nullptr));
    }
    ExpectedImage expected(0, dst.size());
    for (const Copy& copy : chain) expected.apply(copy, Pattern{prev, seed});
    ASSERT_TRUE(expected.matches(dst.data()));
    poison(dst.data(), dst.size());
    ASSERT_TCA_OK(tcaNotify(prev, kAckSlot));
  }
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(next, kAckSlot, nullptr));
}

TEST_P(TransportTest, OneChainKickedManyTimesByPush) {
  kick_one_chain_repeatedly(Method::kDescPush, path(), rank_, next_, prev_);
}
TEST_P(TransportTest, OneChainKickedManyTimesByPull) {
  kick_one_chain_repeatedly(Method::kDescPull, path(), rank_, next_, prev_);
}

// ---- memory the user allocated, and handles of sub-ranges ----

TEST_P(TransportTest, UserMemoryAsTheLocalEndOfAChain) {
  constexpr size_t kBytes = 70001;
  constexpr int kChannel = 1;
  constexpr int kSlot = 9;
  SharedRegion shared(kBytes);
  ASSERT_TRUE(shared.ok());
  std::vector<uint8_t> user(kBytes);
  tcaHandle user_handle{};
  ASSERT_TCA_OK(tcaCreateHandle(&user_handle, user.data(), user.size(), TCA_MEM_CPU));

  // Push from user memory into the next rank's tca memory.
  fill_pattern(user.data(), user.size(), Pattern{rank_, 600}, 0);
  poison(shared.data(), shared.size());
  ASSERT_TCA_OK(tcaBarrier());
  const Copy push = Copy::linear(11, 7, kBytes - 20);
  ASSERT_NO_FATAL_FAILURE(
      kick_chain(path(), shared.of(next_), user_handle, {push}, {{0, kSlot}}, kChannel));
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kSlot, nullptr));
  ExpectedImage pushed(0, kBytes);
  pushed.apply(push, Pattern{prev_, 600});
  EXPECT_TRUE(pushed.matches(shared.data()));
  ASSERT_TCA_OK(tcaBarrier());

  // Pull from the previous rank's tca memory into user memory.
  fill_pattern(shared.data(), shared.size(), Pattern{rank_, 601}, 0);
  poison(user.data(), user.size());
  ASSERT_TCA_OK(tcaBarrier());
  const Copy pull = Copy::linear(1, 2, kBytes - 3);
  ASSERT_NO_FATAL_FAILURE(
      kick_chain(path(), user_handle, shared.of(prev_), {pull}, {{0, kSlot}}, kChannel));
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(rank_, kSlot, nullptr));
  ExpectedImage pulled(0, kBytes);
  pulled.apply(pull, Pattern{prev_, 601});
  EXPECT_TRUE(pulled.matches(user.data()));
  EXPECT_TCA_OK(tcaDestroyHandle(&user_handle));
}

TEST_P(TransportTest, HandleOfASubRangeAddressesFromItsStart) {
  constexpr size_t kBlockBytes = 16 * kKiB;
  constexpr size_t kSubOffset = 4099;
  constexpr size_t kSubBytes = 1000;
  constexpr int kSlot = 10;
  SharedRegion block(kBlockBytes);
  ASSERT_TRUE(block.ok());
  tcaHandle sub{};
  ASSERT_TCA_OK(tcaCreateHandle(&sub, block.data() + kSubOffset, kSubBytes, TCA_MEM_CPU));
  std::vector<tcaHandle> subs(size_);
  ASSERT_TCA_OK(tcaAllgatherHandles(&sub, subs.data()));
  int owner = -1;
  size_t reported = 0;
  tcaMemKind kind = TCA_MEM_GPU;
  ASSERT_TCA_OK(tcaHandleInfo(&subs[next_], &owner, &reported, &kind));
  EXPECT_EQ(owner, next_);
  EXPECT_EQ(reported, kSubBytes);

  poison(block.data(), block.size());
  std::vector<uint8_t> data(kSubBytes);
  fill_pattern(data.data(), data.size(), Pattern{rank_, 700}, 0);
  ASSERT_TCA_OK(tcaBarrier());
  ASSERT_TCA_OK(tcaPut(&subs[next_], 0, data.data(), kSubBytes));
  // The sub-range, not the block around it, bounds transfers through this handle.
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaPut(&subs[next_], 1, data.data(), kSubBytes));
  ASSERT_TCA_OK(tcaNotify(next_, kSlot));
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kSlot, nullptr));
  ExpectedImage expected(0, kBlockBytes);
  expected.apply(Copy::linear(kSubOffset, 0, kSubBytes), Pattern{prev_, 700});
  EXPECT_TRUE(expected.matches(block.data()));
  ASSERT_TCA_OK(tcaBarrier());
  EXPECT_TCA_OK(tcaDestroyHandle(&sub));
}

}  // namespace
}  // namespace tca_test
