// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Data movement on the CUDA paths in all four memory combinations (CPU->CPU, CPU->GPU,
// GPU->CPU, GPU->GPU) and on the copy-engine, SM and automatic paths: the checks of the CPU
// suite (sizes and odd offsets, block-stride, halo faces, chains, repeated kicks) plus
// notification ordering. Destinations start poisoned and are compared byte for byte.
#include <algorithm>
#include <chrono>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gpu_kernels.h"
#include "gpu_test_util.h"

namespace tca_test {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;

INSTANTIATE_TEST_SUITE_P(Cuda, GpuTransferTest, ::testing::ValuesIn(every_gpu_case()),
                         gpu_case_name);

// ---- sizes with odd offsets at both ends ----

const std::vector<SweepCase> kSweep = {
    {1, 0, 0},
    {1, 7, 3},
    {3, 1, 6},
    {8, 0, 0},
    {15, 3, 1},
    {4095, 1, 4097},
    {4096, 0, 16},
    {65537, 13, 7},
    {kMiB + 13, 9, 5},
    {16 * kMiB, 0, 0},
    {16 * kMiB + 3, 3, 5},
};

void sweep_sizes(Method method, const GpuCase& c) {
  KindRegion src(sweep_src_bytes(kSweep), c.src);
  KindRegion dst(sweep_dst_bytes(kSweep), c.dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  run_sweep(method, c.path, kSweep, src, dst);
}

TEST_P(GpuTransferTest, SizesAndOddOffsetsByDescriptorPush) {
  sweep_sizes(Method::kDescPush, GetParam());
}
TEST_P(GpuTransferTest, SizesAndOddOffsetsByDescriptorPull) {
  sweep_sizes(Method::kDescPull, GetParam());
}
// tcaPut / tcaGet with an unregistered buffer of the source's (the destination's) kind.
TEST_P(GpuTransferTest, SizesAndOddOffsetsByPutAndGet) {
  if (GetParam().path != TCA_PATH_CUDA) GTEST_SKIP() << "put and get always take AUTO";
  sweep_sizes(Method::kPut, GetParam());
  sweep_sizes(Method::kGet, GetParam());
}

// ---- block-stride and halo faces ----

TEST_P(GpuTransferTest, BlockStrideWithDifferentPitches) {
  KindRegion src(256 * kKiB, GetParam().src);
  KindRegion dst(256 * kKiB, GetParam().dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  // {dst offset, dst pitch, src offset, src pitch, width, count}
  const std::vector<Copy> cases = {
      Copy::strided(5, 100, 3, 37, 13, 1),
      Copy::strided(1, 29, 0, 13, 13, 64),
      Copy::strided(0, 13, 7, 29, 13, 64),
      Copy::strided(3, 3, 1, 1, 1, 1000),
      Copy::strided(9, 4100, 11, 5000, 4097, 9),
      Copy::strided(2, 7, 5, 11, 7, 333),
      Copy::strided(17, 1031, 6, 517, 515, 201),
      Copy::strided(0, 4096, 0, 4096, 1024, 60),
      Copy::strided(16, 32, 32, 64, 16, 2000),
      // Narrow rows with one end packed (the SMs move 16 bytes at a time there): gathers and
      // scatters of 8, 4, 2 and 1 bytes, packed ends off 16-byte alignment, counts that leave
      // rows over, and a pitched end too misaligned for the packed form.
      Copy::strided(8, 8, 0, 4096, 8, 63),
      Copy::strided(4, 4, 12, 100, 4, 77),
      Copy::strided(2, 2, 6, 34, 2, 99),
      Copy::strided(3, 1, 5, 7, 1, 1001),
      Copy::strided(0, 1000, 8, 8, 8, 101),
      Copy::strided(4, 36, 20, 4, 4, 130),
      Copy::strided(6, 10, 2, 2, 2, 17),
      Copy::strided(0, 8, 4, 4100, 8, 50),
      Copy::strided(16, 8, 0, 24, 8, 3),
  };
  run_each_copy(GetParam().path, cases, src, dst);
}

TEST_P(GpuTransferTest, HaloFacesInEveryOrientation) {
  for (const Grid& grid : {Grid{6, 5, 7, 3}, Grid{64, 32, 16, 8}}) {
    KindRegion src(grid.bytes(), GetParam().src);
    KindRegion dst(grid.bytes(), GetParam().dst);
    ASSERT_TRUE(src.ok() && dst.ok());
    const std::vector<std::pair<const char*, Copy>> faces = grid.ghost_faces();
    uint64_t seed = 200;
    for (Method method : {Method::kDescPush, Method::kDescPull}) {
      for (const auto& face : faces) {
        SCOPED_TRACE(::testing::Message() << method_name(method) << ", face " << face.first
                                          << ", element " << grid.element);
        ASSERT_NO_FATAL_FAILURE(run_ring_exchange(method, GetParam().path, {face.second}, src, dst,
                                                  seed++, 0, dst.size()));
      }
    }
    // All six faces in one chain, as a halo exchange kicks them.
    std::vector<Copy> all;
    for (const auto& face : faces) all.push_back(face.second);
    ASSERT_NO_FATAL_FAILURE(run_ring_exchange(Method::kDescPush, GetParam().path, all, src, dst,
                                              seed++, 0, dst.size()));
  }
}

// ---- chains ----

TEST_P(GpuTransferTest, ChainsOfOneToManyTransfers) {
  constexpr size_t kRegionBytes = 512 * kKiB;
  KindRegion src(kRegionBytes, GetParam().src);
  KindRegion dst(kRegionBytes, GetParam().dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  uint64_t seed = 300;
  for (Method method : {Method::kDescPush, Method::kDescPull}) {
    for (size_t length : {1, 2, 3, 16, 255, 1024}) {
      SCOPED_TRACE(::testing::Message() << method_name(method) << ", chain of " << length);
      ASSERT_NO_FATAL_FAILURE(run_ring_exchange(method, GetParam().path,
                                                chain_layout(length, kRegionBytes), src, dst,
                                                seed++, 0, dst.size()));
    }
  }
}

// Later transfers of a chain overwrite earlier ones where they overlap, as in chain order.
TEST_P(GpuTransferTest, OverlappingTransfersKeepChainOrder) {
  KindRegion src(64 * kKiB, GetParam().src);
  KindRegion dst(64 * kKiB, GetParam().dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  const std::vector<Copy> chain = {
      Copy::linear(100, 0, 20000), Copy::linear(5000, 30000, 1000),  // inside the first
      Copy::strided(4990, 64, 40000, 100, 32, 50),                   // across both
      Copy::linear(4000, 50000, 8000),                               // over all of them
  };
  ASSERT_NO_FATAL_FAILURE(
      run_ring_exchange(Method::kDescPush, GetParam().path, chain, src, dst, 350, 0, dst.size()));
}

// ---- notification ordering ----

// A large transfer then a tiny notifying one: the notification must not overtake the large
// transfer's data (the engines may run the two concurrently). Checked right after the wait.
TEST_P(GpuTransferTest, NotificationNeverOvertakesEarlierData) {
  constexpr size_t kLarge = 32 * kMiB;
  KindRegion src(kLarge + 64, GetParam().src);
  KindRegion dst(kLarge + 64, GetParam().dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  for (uint64_t seed = 800; seed < 806; ++seed) {
    SCOPED_TRACE(::testing::Message() << "round " << seed - 800);
    ASSERT_NO_FATAL_FAILURE(
        run_ring_exchange(Method::kDescPush, GetParam().path,
                          {Copy::linear(0, 0, kLarge), Copy::linear(kLarge + 8, kLarge + 8, 8)},
                          src, dst, seed, 0, dst.size()));
  }
}

// One chain set up once and kicked every round while its source changes; the receiver checks
// and acknowledges, so each round's notification must carry exactly that round's data.
TEST_P(GpuTransferTest, OneChainKickedManyTimes) {
  constexpr int kRounds = 25;
  constexpr int kChannel = 2;
  constexpr int kDataSlot = 5;
  constexpr int kAckSlot = 7;
  KindRegion src(128 * kKiB, GetParam().src);
  KindRegion dst(128 * kKiB, GetParam().dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  const std::vector<Copy> chain = {
      Copy::linear(1, 0, 4097),
      Copy::strided(5000, 61, 4200, 17, 17, 100),
      Copy::linear(20000, 9000, 1),
      Copy::linear(20003, 11000, 100001),
  };
  Desc desc;
  for (size_t i = 0; i < chain.size(); ++i)
    ASSERT_TCA_OK(append_copy(desc.get(), dst.of(next_), src.mine(), chain[i],
                              i + 1 == chain.size() ? TCA_FLAG_NOTIFY : 0u, kDataSlot));
  ASSERT_TCA_OK(tcaDescSetPath(desc.get(), GetParam().path));
  ASSERT_TCA_OK(tcaDescSet(desc.get(), kChannel));
  ASSERT_TRUE(dst.poison_range(0, dst.size()));
  ASSERT_TCA_OK(tcaBarrier());
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const uint64_t seed = 500 + round;
    if (round > 0) {
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(next_, kAckSlot, nullptr));
    }
    ASSERT_TRUE(src.fill_range(Pattern{rank_, seed}, 0, src.size()));
    ASSERT_TCA_OK(tcaStartDMADesc(desc.get()));
    ASSERT_TCA_OK(tcaWaitDMAC(kChannel));
    ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kDataSlot, nullptr));
    ExpectedImage expected(0, dst.size());
    for (const Copy& copy : chain) expected.apply(copy, Pattern{prev_, seed});
    std::vector<uint8_t> landed(dst.size());
    ASSERT_TRUE(dst.read(0, landed.data(), landed.size()));
    ASSERT_TRUE(expected.matches(landed.data()));
    ASSERT_TRUE(dst.poison_range(0, dst.size()));
    ASSERT_TCA_OK(tcaNotify(prev_, kAckSlot));
  }
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(next_, kAckSlot, nullptr));
}

// ---- the resident kernel (TCA_PATH_CUDA_RESIDENT) ----

// Starts tca with the resident kernel leaving after kIdleUs microseconds without a kick.
template <int kIdleUs>
class ResidentKernelTest : public GpuTest {
 protected:
  static constexpr int kIdle = kIdleUs;

 private:
  ScopedEnvironment idle_{"TCA_CUDA_RESIDENT_IDLE_US", std::to_string(kIdleUs)};  // before init
};
using GpuResidentTest = ResidentKernelTest<200>;
using GpuLongResidentTest = ResidentKernelTest<1000000>;  // a second

// Chains through the resident kernel, launched SM and copy-engine chains, and a resident-path
// chain too large for the kernel (launched), all notifying one slot, kicked back to back on
// one channel: every notification must come (a notification overtaken by an earlier kick's
// would leave its slot behind) and every kick's data must land. Bursts of resident kicks
// longer than the kernel's ring fill it; pauses longer than its idle time make it leave and
// come back.
TEST_F(GpuResidentTest, KicksKeepTheirOrderAcrossEnginesAndRestarts) {
  constexpr int kSlot = 9;
  constexpr int kChannel = 1;
  struct Part {
    tcaPath path;
    size_t offset;
    size_t bytes;
  };
  const Part parts[] = {
      {TCA_PATH_CUDA_RESIDENT, 0, 8},
      {TCA_PATH_CUDA_SM, 64, kMiB},
      {TCA_PATH_CUDA_RESIDENT, kMiB + 128, 4097},
      {TCA_PATH_CUDA_CE, kMiB + 8 * kKiB, 4 * kKiB},
      {TCA_PATH_CUDA_RESIDENT, kMiB + 16 * kKiB, 300 * kKiB},  // over the kernel's limit
  };
  const size_t bytes = parts[4].offset + parts[4].bytes;
  KindRegion src(bytes, TCA_MEM_GPU);
  KindRegion dst(bytes, TCA_MEM_GPU);
  ASSERT_TRUE(src.ok() && dst.ok());
  std::vector<Desc> descs(std::size(parts));
  for (size_t i = 0; i < descs.size(); ++i) {
    ASSERT_TCA_OK(tcaDescSetMemcpy(descs[i].get(), &dst.of(next_), parts[i].offset, &src.mine(),
                                   parts[i].offset, parts[i].bytes, TCA_FLAG_NOTIFY, kSlot));
    ASSERT_TCA_OK(tcaDescSetPath(descs[i].get(), parts[i].path));
    ASSERT_TCA_OK(tcaDescSet(descs[i].get(), kChannel));
  }
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const uint64_t seed = 900 + round;
    ASSERT_TRUE(src.fill_range(Pattern{rank_, seed}, 0, bytes));
    ASSERT_TRUE(dst.poison_range(0, bytes));
    ASSERT_TCA_OK(tcaBarrier());  // poisoned before the previous rank kicks
    const int repeats = round % 2 == 0 ? 1 : 30;
    const int burst = round % 2 == 0 ? 1 : 200;  // resident kicks; the ring has 64 slots
    for (int r = 0; r < repeats; ++r)
      for (const Desc& desc : descs) ASSERT_TCA_OK(tcaStartDMADesc(desc.get()));
    for (int r = 0; r < burst; ++r) ASSERT_TCA_OK(tcaStartDMADesc(descs[0].get()));
    ASSERT_TCA_OK(tcaWaitDMAC(kChannel));
    for (size_t n = 0; n < repeats * descs.size() + burst; ++n)
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kSlot, nullptr)) << "notification " << n;
    ExpectedImage expected(0, bytes);
    for (const Part& part : parts)
      expected.apply(Copy::linear(part.offset, part.offset, part.bytes), Pattern{prev_, seed});
    std::vector<uint8_t> landed(bytes);
    ASSERT_TRUE(dst.read(0, landed.data(), bytes));
    ASSERT_TRUE(expected.matches(landed.data()));
    ASSERT_TCA_OK(tcaBarrier());  // checked before the next round refills and poisons
    if (round % 3 == 2) std::this_thread::sleep_for(std::chrono::microseconds(5 * kIdle));
  }
}

// tca's own cudaFree (tcaFree here) ends the resident kernel first instead of waiting for it to
// go idle, and the next kick starts it again.
TEST_F(GpuLongResidentTest, FreeingGpuMemoryDoesNotWaitForTheResidentKernel) {
  constexpr int kSlot = 10;
  KindRegion src(64, TCA_MEM_GPU);
  KindRegion dst(64, TCA_MEM_GPU);
  ASSERT_TRUE(src.ok() && dst.ok());
  Desc desc;
  ASSERT_TCA_OK(
      tcaDescSetMemcpy(desc.get(), &dst.of(next_), 0, &src.mine(), 0, 64, TCA_FLAG_NOTIFY, kSlot));
  ASSERT_TCA_OK(tcaDescSetPath(desc.get(), TCA_PATH_CUDA_RESIDENT));
  ASSERT_TCA_OK(tcaDescSet(desc.get(), 0));
  for (uint64_t seed = 40; seed < 43; ++seed) {
    ASSERT_TRUE(src.fill_range(Pattern{rank_, seed}, 0, 64));
    ASSERT_TRUE(dst.poison_range(0, 64));
    ASSERT_TCA_OK(tcaBarrier());
    ASSERT_TCA_OK(tcaStartDMADesc(desc.get()));
    ASSERT_TCA_OK(tcaWaitDMAC(0));
    ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev_, kSlot, nullptr));
    ExpectedImage expected(0, 64);
    expected.apply(Copy::linear(0, 0, 64), Pattern{prev_, seed});
    std::vector<uint8_t> landed(64);
    ASSERT_TRUE(dst.read(0, landed.data(), 64));
    ASSERT_TRUE(expected.matches(landed.data()));
    void* block = nullptr;
    ASSERT_TCA_OK(tcaMalloc(&block, 4096, TCA_MEM_GPU));
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TCA_OK(tcaFree(block));
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took.count(), kIdle * 1e-6 / 2) << "tcaFree waited for the resident kernel";
    ASSERT_TCA_OK(tcaBarrier());
  }
}

}  // namespace
}  // namespace tca_test

namespace tca_test {
namespace {

// Rank 0 withdraws a region (tcaDestroyHandle) while every other rank streams into it by host
// kicks on this case's path, then poisons the region at once: any byte that lands after the
// return shows.
TEST_P(GpuTransferTest, NoByteLandsAfterTheOwnerWithdrawsTheRegion) {
  const GpuCase& c = GetParam();
  if (size_ < 2) GTEST_SKIP() << "needs a writer and an owner";
  constexpr size_t kBytes = 1 * kMiB;
  constexpr int kRounds = 20;
  KindRegion target(kBytes, c.dst);
  KindRegion source(kBytes, c.src);
  ASSERT_TRUE(target.ok() && source.ok());
  ASSERT_TRUE(source.fill_range(Pattern{rank_, 9}, 0, kBytes));
  uint64_t late_bytes = 0;
  std::vector<uint8_t> landed(kBytes);
  for (int round = 0; round < kRounds; ++round) {
    tcaHandle mine{};
    ASSERT_TCA_OK(tcaCreateHandle(&mine, target.data(), kBytes, c.dst));
    std::vector<tcaHandle> all(size_);
    ASSERT_TCA_OK(tcaAllgatherHandles(&mine, all.data()));
    if (rank_ == 0) {
      ASSERT_TCA_OK(tcaBarrier());
      std::this_thread::sleep_for(std::chrono::microseconds(250 * (round % 8)));
      ASSERT_TCA_OK(tcaDestroyHandle(&mine));
      ASSERT_TRUE(target.poison_range(0, kBytes));
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      ASSERT_TRUE(target.read(0, landed.data(), kBytes));
      for (uint8_t byte : landed) late_bytes += byte != kPoison ? 1 : 0;
    } else {
      Desc desc;
      ASSERT_TCA_OK(tcaDescSetMemcpy(desc.get(), &all[0], 0, &source.mine(), 0, kBytes, 0, 0));
      ASSERT_TCA_OK(tcaDescSetPath(desc.get(), c.path));
      ASSERT_TCA_OK(tcaDescSet(desc.get(), 0));
      ASSERT_TCA_OK(tcaBarrier());
      const double start = now_seconds();
      for (;;) {
        const tcaResult result = tcaStartDMADesc(desc.get());
        if (result == TCA_ERROR_FREED_HANDLE) break;
        ASSERT_TCA_OK(result);
        ASSERT_LT(seconds_since(start), 20.0) << "the owner's withdrawal never showed";
        if (round % 2 == 0) {
          ASSERT_TCA_OK(tcaWaitDMAC(0));  // odd rounds keep kicks queued
        }
      }
      ASSERT_TCA_OK(tcaWaitDMAC(0));
      ASSERT_TCA_OK(tcaDestroyHandle(&mine));
    }
    ASSERT_TCA_OK(tcaBarrier());
  }
  EXPECT_EQ(late_bytes, 0u) << "bytes landed after tcaDestroyHandle returned";
}

}  // namespace
}  // namespace tca_test

namespace tca_test {
namespace {

// A 32-bit cell of pinned host memory that a kernel reads through its device address.
class HostFlag {
 public:
  HostFlag() {
    void* cell = nullptr;
    EXPECT_CUDA_OK(cudaHostAlloc(&cell, sizeof(uint32_t), cudaHostAllocMapped));
    flag_ = static_cast<volatile uint32_t*>(cell);
    if (flag_ != nullptr) *flag_ = 0;
  }
  ~HostFlag() { cudaFreeHost(const_cast<uint32_t*>(flag_)); }
  HostFlag(const HostFlag&) = delete;
  HostFlag& operator=(const HostFlag&) = delete;
  bool ok() const { return flag_ != nullptr; }
  const uint32_t* device() const { return const_cast<const uint32_t*>(flag_); }
  void set() { *flag_ = 1; }

 private:
  volatile uint32_t* flag_ = nullptr;
};

// tcaPut and tcaGet do not wait for the program's kernels on its other streams: both complete,
// byte-exact, while a kernel on a non-blocking stream of the test's holds the GPU until the
// host releases it after them.
TEST_P(GpuTransferTest, PutAndGetDoNotWaitForKernelsOnOtherStreams) {
  const GpuCase& c = GetParam();
  if (c.path != TCA_PATH_CUDA) GTEST_SKIP() << "put and get always take AUTO";
  constexpr size_t kBytes = 64 * kKiB + 5;
  constexpr uint64_t kHoldNs = 20'000'000'000;
  KindRegion src(kBytes, c.src);
  KindRegion put_dst(kBytes, c.dst);
  KindRegion get_dst(kBytes, c.dst);
  HostFlag release;
  DeviceCounters timed_out(1);
  ASSERT_TRUE(src.ok() && put_dst.ok() && get_dst.ok() && release.ok());
  ASSERT_TRUE(src.fill_range(Pattern{rank_, 31}, 0, kBytes));
  ASSERT_TRUE(put_dst.poison_range(0, kBytes));
  ASSERT_TRUE(get_dst.poison_range(0, kBytes));
  ASSERT_TCA_OK(tcaBarrier());
  {
    Stream hold;
    ASSERT_CUDA_OK(hold_until_released(release.device(), timed_out.at(0), kHoldNs, hold.get()));
    const tcaResult put = tcaPut(&put_dst.of(next_), 0, src.data(), kBytes);
    const tcaResult got = tcaGet(get_dst.data(), &src.of(prev_), 0, kBytes);
    release.set();
    ASSERT_CUDA_OK(cudaStreamSynchronize(hold.get()));
    ASSERT_TCA_OK(put);
    ASSERT_TCA_OK(got);
  }
  EXPECT_EQ(read_counter(timed_out.at(0)), 0u) << "tcaPut or tcaGet waited for the held kernel";
  ASSERT_TCA_OK(tcaBarrier());
  ExpectedImage expected(0, kBytes);
  expected.apply(Copy::linear(0, 0, kBytes), Pattern{prev_, 31});
  EXPECT_TRUE(put_dst.holds(expected)) << "tcaPut from rank " << prev_;
  EXPECT_TRUE(get_dst.holds(expected)) << "tcaGet from rank " << prev_;
  ASSERT_TCA_OK(tcaBarrier());
}

}  // namespace
}  // namespace tca_test

namespace tca_test {
namespace {

// A put from pageable host memory large enough to be pinned for the call, and a get of the
// same size into pageable memory (copied through CUDA's staging), byte for byte, at an odd
// destination offset with poisoned guards around it.
TEST_P(GpuTransferTest, LargePutAndGetWithPageableMemory) {
  const GpuCase& c = GetParam();
  if (c.path != TCA_PATH_CUDA || c.src != TCA_MEM_CPU)
    GTEST_SKIP() << "put and get take AUTO; the source is pageable host memory";
  constexpr size_t kBytes = 32 * kMiB + 7;
  constexpr size_t kOffset = 5;
  constexpr size_t kRegion = kBytes + 2 * kOffset;
  KindRegion dst(kRegion, c.dst);
  ASSERT_TRUE(dst.ok());
  ASSERT_TRUE(dst.poison_range(0, kRegion));
  std::vector<uint8_t> source(kBytes);
  fill_pattern(source.data(), kBytes, Pattern{rank_, 41}, 0);
  ASSERT_TCA_OK(tcaBarrier());
  ASSERT_TCA_OK(tcaPut(&dst.of(next_), kOffset, source.data(), kBytes));
  ASSERT_TCA_OK(tcaBarrier());
  std::vector<uint8_t> landed(kRegion);
  ASSERT_TRUE(dst.read(0, landed.data(), kRegion));
  EXPECT_TRUE(is_poison(landed.data(), kOffset));
  EXPECT_TRUE(holds_pattern(landed.data() + kOffset, kBytes, Pattern{prev_, 41}, 0))
      << "tcaPut from rank " << prev_;
  EXPECT_TRUE(is_poison(landed.data() + kOffset + kBytes, kOffset));
  std::vector<uint8_t> fetched(kBytes + 1, kPoison);
  ASSERT_TCA_OK(tcaGet(fetched.data(), &dst.of(prev_), kOffset, kBytes));
  EXPECT_TRUE(holds_pattern(fetched.data(), kBytes, Pattern{(prev_ + size_ - 1) % size_, 41}, 0))
      << "tcaGet from rank " << prev_;
  EXPECT_TRUE(is_poison(fetched.data() + kBytes, 1));
  ASSERT_TCA_OK(tcaBarrier());
}

}  // namespace
}  // namespace tca_test
