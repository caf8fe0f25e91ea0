// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Bad inputs on every transport: each fails with its own code, explains itself in
// tcaGetLastErrorMessage(), and writes nothing anywhere.
#include <climits>
#include <cstdint>
#include <vector>

#include "test_util.h"

namespace tca_test {
namespace {

// Regions for one bad-input case. Bad calls aim at the next rank's `dst` (or, for pulls, at
// this rank's own); finish() then sends one valid marker chain and checks that this rank's
// `dst` holds the marker and otherwise only poison: a rejected call that wrote anyway shows.
class BadInputScene {
 public:
  static constexpr size_t kBytes = 8192;
  static constexpr int kMarkerSlot = 27;
  static constexpr int kMarkerChannel = 0;

  BadInputScene(int rank, int next, int prev, uint64_t seed)
      : rank_(rank), next_(next), prev_(prev), seed_(seed) {
    poison(dst.data(), dst.size());
    fill_pattern(src.data(), src.size(), Pattern{rank_, seed_}, 0);
    EXPECT_TCA_OK(tcaBarrier());
  }

  const tcaHandle& remote_dst() const { return dst.of(next_); }
  const tcaHandle& local_src() const { return src.mine(); }

  // `desc` already holds the valid transfers `appended` (next rank's dst <- own src); the
  // marker is appended last with the notification, then the chain runs and is checked.
  void finish(tcaPath path, tcaDesc desc, std::vector<Copy> appended = {}) {
    const Copy marker = Copy::linear(4000, 10, 33);
    ASSERT_TCA_OK(
        append_copy(desc, remote_dst(), local_src(), marker, TCA_FLAG_NOTIFY, kMarkerSlot));
    appended.push_back(marker);
    ASSERT_TCA_OK(tcaDescSetPath(desc, path));
    ASSERT_TCA_OK(tcaDescSet(desc, kMarkerChannel));
    ASSERT_TCA_OK(tcaStartDMADesc(desc));
    ASSERT_TCA_OK(tcaWaitDMAC(kMarkerChannel));
    ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kMarkerSlot, nullptr));
    ExpectedImage expected(0, dst.size());
    for (const Copy& copy : appended) expected.apply(copy, Pattern{prev_, seed_});
    EXPECT_TRUE(expected.matches(dst.data())) << "a rejected call wrote into rank " << rank_;
    ASSERT_TCA_OK(tcaBarrier());
  }

  SharedRegion src{kBytes};
  SharedRegion dst{kBytes};

 private:
  int rank_, next_, prev_;
  uint64_t seed_;
};

TEST_P(TransportTest, OutOfBoundsIsRejectedAndWritesNothing) {
  BadInputScene scene(rank_, next_, prev_, 2000);
  ASSERT_TRUE(scene.src.ok() && scene.dst.ok());
  const size_t n = BadInputScene::kBytes;
  const tcaHandle& remote = scene.remote_dst();
  const tcaHandle& local = scene.local_src();
  Desc desc;
  tcaDesc d = desc.get();
  // Past the destination's end: by one byte, starting at the end, far away.
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaDescSetMemcpy(d, &remote, 1, &local, 0, n, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaDescSetMemcpy(d, &remote, n, &local, 0, 1, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS,
                   tcaDescSetMemcpy(d, &remote, size_t{1} << 40, &local, 0, 1, 0, 0));
  // Past the source's end.
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaDescSetMemcpy(d, &remote, 0, &local, 1, n, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaDescSetMemcpy(d, &remote, 0, &local, n, 1, 0, 0));
  // 2D: 10 blocks of 100 bytes, pitch 800, from offset 893: the last block ends at n + 1.
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS,
                   tcaDescSetMemcpy2D(d, &remote, 893, 800, &local, 0, 800, 100, 10, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS,
                   tcaDescSetMemcpy2D(d, &remote, 0, 800, &local, 893, 800, 100, 10, 0, 0));
  // A block wider than the whole region, even with one block.
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS,
                   tcaDescSetMemcpy2D(d, &remote, 0, n + 1, &local, 0, n + 1, n + 1, 1, 0, 0));
  // Pull direction: the remote end is the source.
  {
    Desc pull;
    EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaDescSetMemcpy(pull.get(), &scene.dst.mine(), 0,
                                                               &scene.src.of(prev_), 1, n, 0, 0));
    EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaDescSetMemcpy(pull.get(), &scene.dst.mine(), 1,
                                                               &scene.src.of(prev_), 0, n, 0, 0));
  }
  // Immediate forms.
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaPut(&remote, 1, scene.src.data(), n));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaPut(&remote, n, scene.src.data(), 1));
  std::vector<uint8_t> landing(n + 1);
  poison(landing.data(), landing.size());
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaGet(landing.data(), &scene.src.of(prev_), 1, n));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaGet(landing.data(), &scene.src.of(prev_), 0, n + 1));
  EXPECT_TRUE(is_poison(landing.data(), landing.size())) << "a rejected tcaGet wrote";
  ASSERT_NO_FATAL_FAILURE(scene.finish(path(), d));
}

TEST_P(TransportTest, OverflowingSizesAreRejectedAndWriteNothing) {
  BadInputScene scene(rank_, next_, prev_, 2100);
  ASSERT_TRUE(scene.src.ok() && scene.dst.ok());
  const tcaHandle& remote = scene.remote_dst();
  const tcaHandle& local = scene.local_src();
  // Sums that wrap around to small numbers look in bounds to a naive offset + size check.
  // Each call overflows at one end and is otherwise valid (or overflows at both ends), so
  // SIZE_OVERFLOW is the only right answer.
  const size_t wraps_to_4 = SIZE_MAX - 3;  // this + 8 == 4 (mod 2^64)
  const size_t wraps_to_8 = SIZE_MAX - 7;  // 16 + this == 8 (mod 2^64)
  const size_t half = size_t{1} << 63;     // 2 * this == 0 (mod 2^64)
  Desc desc;
  tcaDesc d = desc.get();
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy(d, &remote, SIZE_MAX, &local, 0, 1, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy(d, &remote, wraps_to_4, &local, 0, 8, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy(d, &remote, 0, &local, wraps_to_4, 8, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy(d, &remote, 16, &local, 16, wraps_to_8, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy(d, &remote, 1, &local, 1, SIZE_MAX, 0, 0));
  // 2D extents: (count - 1) * pitch overflows, or wraps to exactly zero.
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy2D(d, &remote, 0, SIZE_MAX / 2, &local, 0, 64, 64, 3, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy2D(d, &remote, 0, 64, &local, 0, 64, 64, SIZE_MAX / 32, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy2D(d, &remote, 0, half, &local, 0, 64, 8, 3, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy2D(d, &remote, 0, 64, &local, 0, half, 8, 3, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaDescSetMemcpy2D(d, &remote, 16, 64, &local, 16, 64, wraps_to_8, 1, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW, tcaPut(&remote, 16, scene.src.data(), wraps_to_8));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW, tcaPut(&remote, 1, scene.src.data(), SIZE_MAX));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW, tcaPut(&remote, wraps_to_4, scene.src.data(), 8));
  std::vector<uint8_t> landing(64);
  poison(landing.data(), landing.size());
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaGet(landing.data(), &scene.src.of(prev_), 16, wraps_to_8));
  EXPECT_TCA_ERROR(TCA_ERROR_SIZE_OVERFLOW,
                   tcaGet(landing.data(), &scene.src.of(prev_), wraps_to_4, 8));
  EXPECT_TRUE(is_poison(landing.data(), landing.size())) << "a rejected tcaGet wrote";
  ASSERT_NO_FATAL_FAILURE(scene.finish(path(), d));
}

TEST_P(TransportTest, ForgedHandlesAreRejectedAndWriteNothing) {
  BadInputScene scene(rank_, next_, prev_, 2200);
  ASSERT_TRUE(scene.src.ok() && scene.dst.ok());
  Desc desc;
  tcaDesc d = desc.get();
  std::vector<uint8_t> landing(64);
  poison(landing.data(), landing.size());
  // The genuine handles are checked (and their bytes remembered) first: a copy that differs in
  // one byte is checked in full all the same.
  ASSERT_TCA_OK(handle_info(&scene.remote_dst()));
  ASSERT_TCA_OK(handle_info(&scene.local_src()));
  ASSERT_TCA_OK(handle_info(&scene.src.of(prev_)));
  for (size_t byte :
       {size_t{0}, size_t{9}, size_t{20}, size_t{47}, size_t{100}, size_t{TCA_HANDLE_BYTES - 1}}) {
    SCOPED_TRACE(::testing::Message() << "byte " << byte << " flipped");
    tcaHandle remote = scene.remote_dst();
    remote.bytes[byte] ^= 0x40;
    tcaHandle local = scene.local_src();
    local.bytes[byte] ^= 0x01;
    tcaHandle source = scene.src.of(prev_);
    source.bytes[byte] ^= 0x80;
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE, handle_info(&remote));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE,
                     tcaDescSetMemcpy(d, &remote, 0, &scene.local_src(), 0, 8, 0, 0));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE,
                     tcaDescSetMemcpy(d, &scene.remote_dst(), 0, &local, 0, 8, 0, 0));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE,
                     tcaDescSetMemcpy2D(d, &remote, 0, 16, &scene.local_src(), 0, 16, 8, 2, 0, 0));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE, tcaPut(&remote, 0, scene.src.data(), 8));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE, tcaGet(landing.data(), &source, 0, 8));
    void* window = nullptr;
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE, tcaPIOPointer(&window, &remote, 0, 8));
  }
  EXPECT_TRUE(is_poison(landing.data(), landing.size())) << "a rejected tcaGet wrote";
  ASSERT_NO_FATAL_FAILURE(scene.finish(path(), d));
}

TEST_P(TransportTest, HandlesOfAnEarlierJobAreForeign) {
  std::vector<tcaHandle> earlier(size_);
  {
    SharedRegion region(4096);
    ASSERT_TRUE(region.ok());
    for (int owner = 0; owner < size_; ++owner) earlier[owner] = region.of(owner);
  }
  // A new job: same processes, a new job key.
  ASSERT_NO_FATAL_FAILURE(reinitialize());
  SharedRegion region(4096);
  ASSERT_TRUE(region.ok());
  std::vector<uint8_t> landing(64);
  poison(landing.data(), landing.size());
  for (int owner = 0; owner < size_; ++owner) {
    SCOPED_TRACE(::testing::Message() << "handle of rank " << owner);
    EXPECT_TCA_ERROR(TCA_ERROR_FOREIGN_HANDLE, handle_info(&earlier[owner]));
    Desc desc;
    EXPECT_TCA_ERROR(TCA_ERROR_FOREIGN_HANDLE,
                     tcaDescSetMemcpy(desc.get(), &earlier[owner], 0, &region.mine(), 0, 8, 0, 0));
    EXPECT_TCA_ERROR(TCA_ERROR_FOREIGN_HANDLE,
                     tcaDescSetMemcpy(desc.get(), &region.mine(), 0, &earlier[owner], 0, 8, 0, 0));
    EXPECT_TCA_ERROR(TCA_ERROR_FOREIGN_HANDLE, tcaPut(&earlier[owner], 0, landing.data(), 8));
    EXPECT_TCA_ERROR(TCA_ERROR_FOREIGN_HANDLE, tcaGet(landing.data(), &earlier[owner], 0, 8));
    void* window = nullptr;
    EXPECT_TCA_ERROR(TCA_ERROR_FOREIGN_HANDLE, tcaPIOPointer(&window, &earlier[owner], 0, 8));
  }
  EXPECT_TRUE(is_poison(landing.data(), landing.size())) << "a rejected tcaGet wrote";
}

TEST_P(TransportTest, FreedRegionsAreRejectedAtImportAndAtKick) {
  constexpr int kChannel = 1;
  constexpr int kSlot = 28;
  SharedRegion src(4096);
  SharedRegion bound(4096);   // a live chain is bound to it before the owner frees it
  SharedRegion unseen(4096);  // nobody resolves its handles before the owner frees it
  ASSERT_TRUE(src.ok() && bound.ok() && unseen.ok());
  fill_pattern(src.data(), src.size(), Pattern{rank_, 2300}, 0);
  Desc chain;
  ASSERT_TCA_OK(tcaDescSetMemcpy(chain.get(), &bound.of(next_), 0, &src.mine(), 0, 100,
                                 TCA_FLAG_NOTIFY, kSlot));
  ASSERT_TCA_OK(tcaDescSetPath(chain.get(), path()));
  ASSERT_TCA_OK(tcaDescSet(chain.get(), kChannel));
  ASSERT_TCA_OK(tcaBarrier());
  ASSERT_TCA_OK(tcaStartDMADesc(chain.get()));
  ASSERT_TCA_OK(tcaWaitDMAC(kChannel));
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kSlot, nullptr));
  ASSERT_TCA_OK(tcaBarrier());

  ASSERT_TCA_OK(bound.free_now());
  ASSERT_TCA_OK(unseen.free_now());
  ASSERT_TCA_OK(tcaBarrier());

  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaStartDMADesc(chain.get()));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, handle_info(&bound.of(next_)));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, handle_info(&unseen.of(next_)));
  Desc fresh;
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE,
                   tcaDescSetMemcpy(fresh.get(), &unseen.of(next_), 0, &src.mine(), 0, 8, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaPut(&bound.of(next_), 0, src.data(), 8));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaPut(&bound.of(next_), 0, src.data(), 0));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaPut(&unseen.of(next_), 0, src.data(), 8));
  std::vector<uint8_t> landing(64);
  poison(landing.data(), landing.size());
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaGet(landing.data(), &bound.of(next_), 0, 8));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaGet(landing.data(), &bound.of(next_), 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaGet(landing.data(), &unseen.of(prev_), 0, 8));
  EXPECT_TRUE(is_poison(landing.data(), landing.size())) << "a rejected tcaGet wrote";
  void* window = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaPIOPointer(&window, &unseen.of(next_), 0, 8));
  ASSERT_TCA_OK(tcaBarrier());
}

TEST_P(TransportTest, DestroyedHandlesAreRejectedAndWriteNothing) {
  constexpr size_t kBytes = 4096;
  constexpr int kChannel = 2;
  constexpr int kSlot = 29;
  SharedRegion src(kBytes);
  SharedRegion block(kBytes);  // stays allocated: only a second registration of it goes away
  ASSERT_TRUE(src.ok() && block.ok());
  fill_pattern(src.data(), src.size(), Pattern{rank_, 2400}, 0);
  tcaHandle mine{};
  ASSERT_TCA_OK(tcaCreateHandle(&mine, block.data(), kBytes, TCA_MEM_CPU));
  std::vector<tcaHandle> registrations(size_);
  ASSERT_TCA_OK(tcaAllgatherHandles(&mine, registrations.data()));
  Desc chain;
  ASSERT_TCA_OK(tcaDescSetMemcpy(chain.get(), &registrations[next_], 0, &src.mine(), 0, kBytes,
                                 TCA_FLAG_NOTIFY, kSlot));
  ASSERT_TCA_OK(tcaDescSetPath(chain.get(), path()));
  ASSERT_TCA_OK(tcaDescSet(chain.get(), kChannel));
  ASSERT_TCA_OK(tcaStartDMADesc(chain.get()));
  ASSERT_TCA_OK(tcaWaitDMAC(kChannel));
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kSlot, nullptr));
  ASSERT_TCA_OK(tcaBarrier());

  ASSERT_TCA_OK(tcaDestroyHandle(&mine));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaDestroyHandle(&mine));
  poison(block.data(), block.size());
  ASSERT_TCA_OK(tcaBarrier());

  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaStartDMADesc(chain.get()));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaPut(&registrations[next_], 0, src.data(), 8));
  void* window = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaPIOPointer(&window, &registrations[next_], 0, 8));
  // Give a wrongly started transfer time to land before looking.
  tcaWaitDMAC(kChannel);
  ASSERT_TCA_OK(tcaBarrier());
  EXPECT_TRUE(is_poison(block.data(), block.size()))
      << "a transfer through a destroyed handle reached rank " << rank_;
  // The block's own registration is untouched by the other one's end.
  EXPECT_TCA_OK(handle_info(&block.of(next_)));
}

TEST_P(TransportTest, UnknownChannelsAreRejected) {
  BadInputScene scene(rank_, next_, prev_, 2500);
  ASSERT_TRUE(scene.src.ok() && scene.dst.ok());
  Desc desc;
  const Copy copy = Copy::linear(100, 200, 300);
  ASSERT_TCA_OK(append_copy(desc.get(), scene.remote_dst(), scene.local_src(), copy, 0, 0));
  ASSERT_TCA_OK(tcaDescSetPath(desc.get(), path()));
  // TCA_USER_DMA_CHANNELS and above are the collectives' own.
  for (int channel :
       {-1, TCA_USER_DMA_CHANNELS, TCA_DMA_CHANNELS - 1, TCA_DMA_CHANNELS, INT_MAX, INT_MIN}) {
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_CHANNEL, tcaDescSet(desc.get(), channel))
        << "channel " << channel;
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_CHANNEL, tcaWaitDMAC(channel)) << "channel " << channel;
  }
  // A chain whose binding failed was never bound.
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaStartDMADesc(desc.get()));
  ASSERT_NO_FATAL_FAILURE(scene.finish(path(), desc.get(), {copy}));
}

TEST_P(TransportTest, UnknownSlotsAreRejected) {
  BadInputScene scene(rank_, next_, prev_, 2600);
  ASSERT_TRUE(scene.src.ok() && scene.dst.ok());
  Desc desc;
  const tcaHandle& remote = scene.remote_dst();
  const tcaHandle& local = scene.local_src();
  // TCA_USER_NOTIFY_SLOTS and above are the collectives' own.
  for (int slot : {-1, TCA_USER_NOTIFY_SLOTS, TCA_NOTIFY_SLOTS - 1, TCA_NOTIFY_SLOTS, INT_MAX}) {
    SCOPED_TRACE(::testing::Message() << "slot " << slot);
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_SLOT,
                     tcaDescSetMemcpy(desc.get(), &remote, 0, &local, 0, 8, TCA_FLAG_NOTIFY, slot));
    EXPECT_TCA_ERROR(
        TCA_ERROR_INVALID_SLOT,
        tcaDescSetMemcpy2D(desc.get(), &remote, 0, 16, &local, 0, 16, 8, 4, TCA_FLAG_NOTIFY, slot));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_SLOT, tcaNotify(next_, slot));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_SLOT, tcaWaitDMARecvDesc(prev_, slot, nullptr));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_SLOT, tcaWaitDMARecvDesc(TCA_ANY_RANK, slot, nullptr));
    int arrived = 0;
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_SLOT, tcaTestDMARecvDesc(prev_, slot, &arrived, nullptr));
  }
  ASSERT_NO_FATAL_FAILURE(scene.finish(path(), desc.get()));
}

TEST_P(TransportTest, NullFreedAndUnboundDescriptorsAreRejected) {
  BadInputScene scene(rank_, next_, prev_, 2700);
  ASSERT_TRUE(scene.src.ok() && scene.dst.ok());
  const tcaHandle& remote = scene.remote_dst();
  const tcaHandle& local = scene.local_src();
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaStartDMADesc(nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaDescSet(nullptr, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaDescSetPath(nullptr, TCA_PATH_AUTO));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC,
                   tcaDescSetMemcpy(nullptr, &remote, 0, &local, 0, 8, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC,
                   tcaDescSetMemcpy2D(nullptr, &remote, 0, 16, &local, 0, 16, 8, 2, 0, 0));
  {
    tcaDesc freed = nullptr;
    ASSERT_TCA_OK(tcaDescNew(&freed));
    ASSERT_TCA_OK(tcaDescSetMemcpy(freed, &remote, 0, &local, 0, 8, 0, 0));
    ASSERT_TCA_OK(tcaDescFree(freed));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaStartDMADesc(freed)) << "a freed descriptor";
  }
  Desc empty;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaStartDMADesc(empty.get())) << "an empty descriptor";

  Desc desc;
  const Copy first = Copy::linear(0, 0, 1000);
  const Copy second = Copy::strided(1500, 100, 2000, 50, 30, 20);
  ASSERT_TCA_OK(append_copy(desc.get(), remote, local, first, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaStartDMADesc(desc.get()))
      << "kicked before tcaDescSet";
  ASSERT_TCA_OK(tcaDescSetPath(desc.get(), path()));
  ASSERT_TCA_OK(tcaDescSet(desc.get(), 1));
  ASSERT_TCA_OK(append_copy(desc.get(), remote, local, second, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaStartDMADesc(desc.get()))
      << "kicked after appending unbound it";
  ASSERT_NO_FATAL_FAILURE(scene.finish(path(), desc.get(), {first, second}));
}

TEST_P(TransportTest, UnknownRanksAreRejected) {
  for (int bad : {size_, size_ + 1, -2, INT_MAX, INT_MIN}) {
    SCOPED_TRACE(::testing::Message() << "rank " << bad);
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaNotify(bad, 0));
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaWaitDMARecvDesc(bad, 0, nullptr));
    int arrived = 0;
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaTestDMARecvDesc(bad, 0, &arrived, nullptr));
    const char* name = nullptr;
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaPeerTransport(bad, &name));
    int available = 0;
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaPathAvailable(path(), bad, &available));
  }
  // TCA_ANY_RANK names a source to wait for, never a destination.
  const char* name = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaNotify(TCA_ANY_RANK, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaPeerTransport(TCA_ANY_RANK, &name));
  ASSERT_TCA_OK(tcaBarrier());
}

TEST_P(TransportTest, NullArgumentsAndBadFlagsAreRejected) {
  BadInputScene scene(rank_, next_, prev_, 2800);
  ASSERT_TRUE(scene.src.ok() && scene.dst.ok());
  const tcaHandle& remote = scene.remote_dst();
  const tcaHandle& local = scene.local_src();
  uint8_t buffer[8] = {};
  void* pointer = nullptr;
  tcaHandle handle{};
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaRank(nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaSize(nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaMalloc(nullptr, 64, TCA_MEM_CPU));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaMalloc(&pointer, 64, static_cast<tcaMemKind>(7)));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCreateHandle(nullptr, buffer, 8, TCA_MEM_CPU));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCreateHandle(&handle, nullptr, 8, TCA_MEM_CPU));
  int owner = 0;
  size_t bytes = 0;
  tcaMemKind kind = TCA_MEM_CPU;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaHandleInfo(nullptr, &owner, &bytes, &kind));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaDescNew(nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaPut(nullptr, 0, buffer, 8));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaPut(&remote, 0, nullptr, 8));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaGet(nullptr, &remote, 0, 8));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaPIOPointer(nullptr, &remote, 0, 8));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaTestDMARecvDesc(prev_, 0, nullptr, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaPathAvailable(path(), next_, nullptr));
  Desc desc;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaDescSetMemcpy(desc.get(), nullptr, 0, &local, 0, 8, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaDescSetMemcpy(desc.get(), &remote, 0, nullptr, 0, 8, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaDescSetMemcpy(desc.get(), &remote, 0, &local, 0, 8, 0x80u, 0))
      << "an unknown flag";
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaDescSetPath(desc.get(), static_cast<tcaPath>(9)));
  ASSERT_NO_FATAL_FAILURE(scene.finish(path(), desc.get()));
}

TEST_P(TransportTest, CallsOutsideInitFinalizeAreRejected) {
  ASSERT_TCA_OK(finalize());
  int value = 0;
  void* pointer = nullptr;
  uint8_t buffer[8] = {};
  tcaHandle handle{};
  tcaDesc desc = nullptr;
  const char* name = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaFinalize());
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaRank(&value));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaSize(&value));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaBarrier());
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaSetTimeout(100));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaGetTimeout(&value));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaPeerTransport(0, &name));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaPathAvailable(path(), 0, &value));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaMalloc(&pointer, 64, TCA_MEM_CPU));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaCreateHandle(&handle, buffer, 8, TCA_MEM_CPU));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaAllgatherHandles(&handle, &handle));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, handle_info(&handle));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaDescNew(&desc));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaWaitDMAC(0));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaWaitDMARecvDesc(0, 0, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaTestDMARecvDesc(0, 0, &value, nullptr));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaPut(&handle, 0, buffer, 8));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaGet(buffer, &handle, 0, 8));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaPIOPointer(&pointer, &handle, 0, 8));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaPIOFence());
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaNotify(0, 0));

  ASSERT_TCA_OK(initialize());
  tcaConfig config{};
  config.transport = GetParam().c_str();
  EXPECT_TCA_ERROR(TCA_ERROR_ALREADY_INITIALIZED, tcaInitWithConfig(&config));
  EXPECT_TCA_ERROR(TCA_ERROR_ALREADY_INITIALIZED, tcaInit());
}

}  // namespace
}  // namespace tca_test
