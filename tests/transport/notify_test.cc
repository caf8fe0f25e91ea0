// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Notifications (what a wait guarantees, queueing, TCA_ANY_RANK, polling, timeouts) and PIO.
#include <algorithm>
#include <cstring>
#include <vector>

#include "test_util.h"

namespace tca_test {
namespace {

TEST_P(TransportTest, WaitReturnsOnlyOnceEveryEarlierTransferOfTheChainIsVisible) {
  constexpr int kFirstSlot = 3;
  constexpr int kLastSlot = 4;
  SharedRegion src(8 * kMiB);
  SharedRegion dst(8 * kMiB);
  ASSERT_TRUE(src.ok() && dst.ok());
  // Large transfers first, the notifying ones small and last: a notification that overtakes
  // the data before it shows up as poison in the check.
  const std::vector<Copy> chain = {
      Copy::linear(1, 3, 4 * kMiB),                           // 0
      Copy::strided(4 * kMiB + 100, 1000, 5, 999, 777, 300),  // 1
      Copy::linear(7 * kMiB, 4 * kMiB, 1),                    // 2: notifies kFirstSlot
      Copy::linear(7 * kMiB + 5, 5 * kMiB, kMiB - 77),        // 3
      Copy::linear(8 * kMiB - 2, 6 * kMiB, 1),                // 4: notifies kLastSlot
  };
  poison(dst.data(), dst.size());
  fill_pattern(src.data(), src.size(), Pattern{rank_, 800}, 0);
  ASSERT_TCA_OK(tcaBarrier());
  ASSERT_NO_FATAL_FAILURE(
      kick_chain(path(), dst.of(next_), src.mine(), chain, {{2, kFirstSlot}, {4, kLastSlot}}, 0));

  int from = -1;
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kFirstSlot, &from));
  EXPECT_EQ(from, prev_);
  for (size_t i = 0; i <= 2; ++i) {
    ExpectedImage part(chain[i].dst_offset, chain[i].dst_end() - chain[i].dst_offset);
    part.apply(chain[i], Pattern{prev_, 800});
    EXPECT_TRUE(part.matches(dst.data())) << "transfer " << i << " at the first notification";
  }
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kLastSlot, &from));
  EXPECT_EQ(from, prev_);
  ExpectedImage everything(0, dst.size());
  for (const Copy& copy : chain) everything.apply(copy, Pattern{prev_, 800});
  EXPECT_TRUE(everything.matches(dst.data()));
  ASSERT_TCA_OK(tcaBarrier());
}

TEST_P(TransportTest, QueuedNotificationsAreEachConsumedOnce) {
  constexpr int kKicks = 5;
  constexpr int kNotifies = 3;
  constexpr int kKickSlot = 11;
  constexpr int kNotifySlot = 12;
  SharedRegion src(64 * kKiB);
  SharedRegion dst(64 * kKiB);
  ASSERT_TRUE(src.ok() && dst.ok());
  const Copy copy = Copy::linear(17, 3, 50001);
  poison(dst.data(), dst.size());
  fill_pattern(src.data(), src.size(), Pattern{rank_, 900}, 0);
  ASSERT_TCA_OK(tcaBarrier());

  Desc desc;
  ASSERT_TCA_OK(
      append_copy(desc.get(), dst.of(next_), src.mine(), copy, TCA_FLAG_NOTIFY, kKickSlot));
  ASSERT_TCA_OK(tcaDescSetPath(desc.get(), path()));
  ASSERT_TCA_OK(tcaDescSet(desc.get(), 2));
  for (int kick = 0; kick < kKicks; ++kick) {
    ASSERT_TCA_OK(tcaStartDMADesc(desc.get()));
    ASSERT_TCA_OK(tcaWaitDMAC(2));
  }
  for (int notify = 0; notify < kNotifies; ++notify) {
    ASSERT_TCA_OK(tcaNotify(next_, kNotifySlot));
  }
  // Everything is sent before anyone consumes: the notifications must have queued.
  ASSERT_TCA_OK(tcaBarrier());

  // The other slot's notifications are not consumed by these waits.
  for (int notify = 0; notify < kNotifies; ++notify) {
    int from = -1;
    ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kNotifySlot, &from));
    EXPECT_EQ(from, prev_);
  }
  for (int kick = 0; kick < kKicks; ++kick) {
    int from = -1;
    ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kKickSlot, &from));
    EXPECT_EQ(from, prev_);
  }
  for (int slot : {kKickSlot, kNotifySlot}) {
    int arrived = -1;
    ASSERT_TCA_OK(tcaTestDMARecvDesc(prev_, slot, &arrived, nullptr));
    EXPECT_EQ(arrived, 0) << "slot " << slot << " notified more often than it was raised";
    ASSERT_TCA_OK(tcaTestDMARecvDesc(TCA_ANY_RANK, slot, &arrived, nullptr));
    EXPECT_EQ(arrived, 0) << "slot " << slot << " from any rank";
  }
  ExpectedImage expected(0, dst.size());
  expected.apply(copy, Pattern{prev_, 900});
  EXPECT_TRUE(expected.matches(dst.data()));
  ASSERT_TCA_OK(tcaBarrier());
}

TEST_P(TransportTest, AnyRankWaitHearsEverySenderOnce) {
  constexpr int kSlot = 20;
  constexpr size_t kSegment = 40000;  // each sender's part of the receiver's region
  SharedRegion src(kSegment);
  SharedRegion dst(kSegment * size_);
  ASSERT_TRUE(src.ok() && dst.ok());
  const Copy copy = Copy::linear(0, 0, kSegment);
  for (int receiver = 0; receiver < size_; ++receiver) {
    SCOPED_TRACE(::testing::Message() << "receiver " << receiver);
    const uint64_t seed = 1000 + receiver;
    poison(dst.data(), dst.size());
    fill_pattern(src.data(), src.size(), Pattern{rank_, seed}, 0);
    ASSERT_TCA_OK(tcaBarrier());
    Copy mine = copy;
    mine.dst_offset = rank_ * kSegment;
    ASSERT_NO_FATAL_FAILURE(kick_chain(path(), dst.of(receiver), src.mine(), {mine}, {{0, kSlot}},
                                       receiver % TCA_USER_DMA_CHANNELS));
    if (rank_ == receiver) {
      std::vector<int> heard(size_, 0);
      for (int i = 0; i < size_; ++i) {
        int from = -1;
        ASSERT_TCA_OK(tcaWaitDMARecvDesc(TCA_ANY_RANK, kSlot, &from));
        ASSERT_GE(from, 0);
        ASSERT_LT(from, size_);
        ++heard[from];
        // The sender's whole transfer is visible as soon as its notification is consumed.
        EXPECT_TRUE(holds_pattern(dst.data() + from * kSegment, kSegment, Pattern{from, seed}, 0))
            << "segment of sender " << from;
      }
      for (int sender = 0; sender < size_; ++sender) {
        EXPECT_EQ(heard[sender], 1) << "notifications heard from rank " << sender;
      }
    }
    ASSERT_TCA_OK(tcaBarrier());
  }
}

TEST_P(TransportTest, TestDMARecvDescPollsWithoutBlocking) {
  constexpr int kSlot = 30;
  constexpr double kPatienceSeconds = 20;
  SharedRegion src(32 * kKiB);
  SharedRegion dst(32 * kKiB);
  ASSERT_TRUE(src.ok() && dst.ok());
  const Copy copy = Copy::linear(3, 1, 30000);
  for (int src_rank : {prev_, TCA_ANY_RANK}) {
    SCOPED_TRACE(::testing::Message() << "polling source " << src_rank);
    const uint64_t seed = 1100 + (src_rank == TCA_ANY_RANK);
    poison(dst.data(), dst.size());
    fill_pattern(src.data(), src.size(), Pattern{rank_, seed}, 0);
    int arrived = -1;
    ASSERT_TCA_OK(tcaTestDMARecvDesc(src_rank, kSlot, &arrived, nullptr));
    EXPECT_EQ(arrived, 0) << "a notification before anyone sent one";
    ASSERT_TCA_OK(tcaBarrier());

    ASSERT_NO_FATAL_FAILURE(kick_chain(path(), dst.of(next_), src.mine(), {copy}, {{0, kSlot}}, 1));
    int from = -1;
    const ::testing::AssertionResult polled =
        poll_notification(src_rank, kSlot, &from, kPatienceSeconds);
    EXPECT_TRUE(polled);
    // Keep the ranks in step after a failed poll (a sender may only now get through), so the
    // cases after this one still run.
    if (!polled) {
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(src_rank, kSlot, &from));
    }
    EXPECT_EQ(from, prev_);
    ExpectedImage expected(0, dst.size());
    expected.apply(copy, Pattern{prev_, seed});
    EXPECT_TRUE(expected.matches(dst.data()));
    ASSERT_TCA_OK(tcaTestDMARecvDesc(src_rank, kSlot, &arrived, nullptr));
    EXPECT_EQ(arrived, 0) << "the notification was not consumed";
    ASSERT_TCA_OK(tcaBarrier());
  }
}

TEST_P(TransportTest, WaitWithoutNotificationTimesOut) {
  constexpr int kTimeoutMs = 200;
  constexpr int kSilentSlot = TCA_USER_NOTIFY_SLOTS - 1;  // nobody notifies it
  ASSERT_TCA_OK(tcaSetTimeout(kTimeoutMs));
  int timeout_ms = 0;
  ASSERT_TCA_OK(tcaGetTimeout(&timeout_ms));
  EXPECT_EQ(timeout_ms, kTimeoutMs);
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaGetTimeout(nullptr));
  for (int src_rank : {prev_, TCA_ANY_RANK}) {
    const double start = now_seconds();
    int from = -1;
    EXPECT_TCA_ERROR(TCA_ERROR_TIMEOUT, tcaWaitDMARecvDesc(src_rank, kSilentSlot, &from))
        << "waiting on rank " << src_rank;
    const double waited = seconds_since(start);
    EXPECT_GE(waited, 0.9 * kTimeoutMs / 1000) << "gave up before the timeout";
    EXPECT_LT(waited, 10.0) << "outlived its timeout by far";
  }
  ASSERT_TCA_OK(tcaSetTimeout(kTestTimeoutMs));
  ASSERT_TCA_OK(tcaBarrier());
}

// ---- PIO ----

TEST_P(TransportTest, PIOStoresFencedBeforeNotify) {
  constexpr int kSlot = 26;
  constexpr size_t kOffset = 13;
  constexpr size_t kBytes = 100003;
  SharedRegion dst(128 * kKiB);
  ASSERT_TRUE(dst.ok());
  poison(dst.data(), dst.size());
  ASSERT_TCA_OK(tcaBarrier());
  void* window = nullptr;
  const tcaResult result = tcaPIOPointer(&window, &dst.of(next_), kOffset, kBytes);
  if (!is_shm()) {
    // MPI windows are not mapped into peers; own memory may be, so only peers are checked.
    if (next_ != rank_) {
      EXPECT_TCA_ERROR(TCA_ERROR_UNSUPPORTED, result);
    }
    ASSERT_TCA_OK(tcaBarrier());
    return;
  }
  ASSERT_TCA_OK(result);
  ASSERT_NE(window, nullptr);
  // Stores of every width, as a kernel writing through PIO would issue them.
  auto* bytes = static_cast<uint8_t*>(window);
  std::vector<uint8_t> data(kBytes);
  fill_pattern(data.data(), data.size(), Pattern{rank_, 1200}, 0);
  for (size_t i = 0; i < 64; ++i) static_cast<volatile uint8_t*>(window)[i] = data[i];
  std::memcpy(bytes + 64, data.data() + 64, kBytes - 64);
  ASSERT_TCA_OK(tcaPIOFence());
  ASSERT_TCA_OK(tcaNotify(next_, kSlot));

  int from = -1;
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kSlot, &from));
  EXPECT_EQ(from, prev_);
  ExpectedImage expected(0, dst.size());
  expected.apply(Copy::linear(kOffset, 0, kBytes), Pattern{prev_, 1200});
  EXPECT_TRUE(expected.matches(dst.data()));
  ASSERT_TCA_OK(tcaBarrier());
}

TEST_P(TransportTest, PIOPointerOutsideTheRegionIsRefused) {
  SharedRegion dst(4096);
  ASSERT_TRUE(dst.ok());
  void* window = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaPIOPointer(&window, &dst.of(next_), 1, 4096));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaPIOPointer(&window, &dst.of(next_), 4096, 1));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW, tcaPIOPointer(&window, &dst.of(next_), 2, SIZE_MAX));
}

TEST_P(TransportTest, PIOPointerIntoUnmappedUserMemoryIsUnsupported) {
  std::vector<uint8_t> user(4096);
  tcaHandle own{};
  ASSERT_TCA_OK(tcaCreateHandle(&own, user.data(), user.size(), TCA_MEM_CPU));
  std::vector<tcaHandle> all(size_);
  ASSERT_TCA_OK(tcaAllgatherHandles(&own, all.data()));
  // Memory from the user's allocator is not shareable, so no peer can map it.
  if (next_ != rank_) {
    void* window = nullptr;
    EXPECT_TCA_ERROR(TCA_ERROR_UNSUPPORTED, tcaPIOPointer(&window, &all[next_], 0, 16));
  }
  ASSERT_TCA_OK(tcaBarrier());
  EXPECT_TCA_OK(tcaDestroyHandle(&own));
}

}  // namespace
}  // namespace tca_test
