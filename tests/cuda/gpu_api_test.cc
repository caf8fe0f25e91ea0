// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU API: stream-ordered chains and waits (eager and captured in a CUDA graph), the device
// API (put with signal in thread, warp and block form, SET and ADD signals), the automatic
// path's calibration, and the errors GPU memory adds.
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "gpu_kernels.h"
#include "gpu_test_util.h"

namespace tca_test {
namespace {

constexpr size_t kKiB = 1024;

// ---- stream ordering ----

class GpuStreamTest : public GpuTest, public ::testing::WithParamInterface<tcaPath> {};
INSTANTIATE_TEST_SUITE_P(Cuda, GpuStreamTest,
                         ::testing::Values(TCA_PATH_CUDA_CE, TCA_PATH_CUDA_SM,
                                           TCA_PATH_CUDA_RESIDENT, TCA_PATH_CUDA),
                         [](const ::testing::TestParamInfo<tcaPath>& info) {
                           return std::string(path_name(info.param));
                         });

// Each round, entirely in one stream of every rank: a kernel fills the source, the data chain
// carries it to the next rank, the stream waits for the previous rank's data, a kernel checks
// it, an acknowledgement chain tells the previous rank, and the stream waits for the next
// rank's acknowledgement before the source is refilled. No host call inside the loop.
void stream_ordered_rounds(tcaPath path, int rank, int next, int prev, bool captured) {
  constexpr size_t kBytes = 300 * kKiB + 5;
  constexpr int kRounds = 20;
  constexpr int kDataSlot = 11;
  constexpr int kAckSlot = 12;
  KindRegion src(kBytes, TCA_MEM_GPU);
  KindRegion dst(kBytes, TCA_MEM_GPU);
  KindRegion ack(16, TCA_MEM_GPU);
  ASSERT_TRUE(src.ok() && dst.ok() && ack.ok());
  DeviceCounters counters(2);  // [0] the round, [1] mismatched bytes
  Desc data;
  ASSERT_TCA_OK(tcaDescSetMemcpy(data.get(), &dst.of(next), 0, &src.mine(), 0, kBytes,
                                 TCA_FLAG_NOTIFY, kDataSlot));
  ASSERT_TCA_OK(tcaDescSetPath(data.get(), path));
  ASSERT_TCA_OK(tcaDescSet(data.get(), 0));
  Desc acknowledge;
  ASSERT_TCA_OK(tcaDescSetMemcpy(acknowledge.get(), &ack.of(prev), 8, &ack.mine(), 0, 1,
                                 TCA_FLAG_NOTIFY, kAckSlot));
  ASSERT_TCA_OK(tcaDescSetPath(acknowledge.get(), path));
  ASSERT_TCA_OK(tcaDescSet(acknowledge.get(), 1));
  ASSERT_TCA_OK(tcaBarrier());

  Stream stream;
  const auto one_round = [&]() -> ::testing::AssertionResult {
    auto* mismatches = reinterpret_cast<unsigned long long*>(counters.at(1));
    cudaError_t error = fill_round_pattern(src.data(), kBytes, rank, counters.at(0), stream.get());
    if (error != cudaSuccess) return cuda_succeeded(error, "fill_round_pattern");
    if (auto started = succeeded(tcaStartDMADescStream(data.get(), stream.get()), "data"); !started)
      return started;
    if (auto waited = succeeded(tcaWaitDMARecvDescStream(prev, kDataSlot, stream.get()), "wait");
        !waited)
      return waited;
    error =
        count_round_mismatches(dst.data(), kBytes, prev, counters.at(0), mismatches, stream.get());
    if (error != cudaSuccess) return cuda_succeeded(error, "count_round_mismatches");
    if (auto acked = succeeded(tcaStartDMADescStream(acknowledge.get(), stream.get()), "ack");
        !acked)
      return acked;
    if (auto waited = succeeded(tcaWaitDMARecvDescStream(next, kAckSlot, stream.get()), "ack wait");
        !waited)
      return waited;
    return cuda_succeeded(advance_round(counters.at(0), stream.get()), "advance_round");
  };

  if (captured) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_CUDA_OK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    const ::testing::AssertionResult recorded = one_round();
    ASSERT_CUDA_OK(cudaStreamEndCapture(stream.get(), &graph));
    ASSERT_TRUE(recorded);
    ASSERT_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int round = 0; round < kRounds; ++round) {
      ASSERT_CUDA_OK(cudaGraphLaunch(exec, stream.get()));
    }
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  } else {
    for (int round = 0; round < kRounds; ++round) ASSERT_TRUE(one_round());
    ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
  }
  EXPECT_EQ(read_counter(counters.at(0)), static_cast<uint64_t>(kRounds));
  EXPECT_EQ(read_counter(counters.at(1)), 0u) << "bytes that differed from the sender's round";
  // Host and GPU count on the same sequences: a host notification still lines up.
  ASSERT_TCA_OK(tcaNotify(next, kDataSlot));
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev, kDataSlot, nullptr));
  ASSERT_TCA_OK(tcaBarrier());
}

TEST_P(GpuStreamTest, RoundsOrderedInOneStream) {
  stream_ordered_rounds(GetParam(), rank_, next_, prev_, false);
}
TEST_P(GpuStreamTest, RoundsCapturedInACudaGraph) {
  stream_ordered_rounds(GetParam(), rank_, next_, prev_, true);
}

// ---- device API ----

class GpuDeviceApiTest : public GpuTest {};

TEST_F(GpuDeviceApiTest, PutWithSignalInEveryFormAndSize) {
  constexpr size_t kRegionBytes = 256 * kKiB;
  KindRegion src(kRegionBytes, TCA_MEM_GPU);
  KindRegion dst(kRegionBytes, TCA_MEM_GPU);
  ASSERT_TRUE(src.ok() && dst.ok());
  Stream stream;
  int signal_index = 0;
  uint64_t seed = 900;
  for (PutForm form : {PutForm::kThread, PutForm::kWarp, PutForm::kBlock}) {
    for (bool add : {false, true}) {
      // {src offset, dst offset, bytes}: aligned to 16 and to 8 only (the copy's two wide
      // loops), odd, and misaligned against each other.
      for (const Copy& copy :
           {Copy::linear(0, 0, 8), Copy::linear(8, 24, 520), Copy::linear(3, 1, 1000),
            Copy::linear(16, 32, 4096), Copy::linear(5, 9, 65536 + 3)}) {
        SCOPED_TRACE(::testing::Message()
                     << "form " << static_cast<int>(form) << ", " << (add ? "add" : "set") << ", "
                     << copy.width << " bytes");
        if (form == PutForm::kThread && copy.width > 4096) continue;  // one thread: too slow
        ASSERT_TRUE(dst.poison_range(0, dst.size()));
        ASSERT_TRUE(src.fill_range(Pattern{rank_, seed}, 0, src.size()));
        ASSERT_TCA_OK(tcaBarrier());
        RingPut ring = {};
        ASSERT_TCA_OK(
            tcaDevicePointer(&ring.remote_dst, &dst.of(next_), copy.dst_offset, copy.width));
        ring.src = src.data() + copy.src_offset;
        ring.bytes = copy.width;
        ASSERT_TCA_OK(tcaDeviceSignal(&ring.remote_signal, next_, signal_index));
        ASSERT_TCA_OK(tcaDeviceSignal(&ring.own_signal, rank_, signal_index));
        ring.add = add;
        ring.rounds = 10;
        ASSERT_CUDA_OK(run_device_ring(form, ring, stream.get()));
        ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
        ASSERT_TCA_OK(tcaBarrier());
        ExpectedImage expected(0, dst.size());
        expected.apply(copy, Pattern{prev_, seed});
        std::vector<uint8_t> landed(dst.size());
        ASSERT_TRUE(dst.read(0, landed.data(), landed.size()));
        EXPECT_TRUE(expected.matches(landed.data()));
        EXPECT_EQ(read_counter(ring.own_signal), 10u);
        ++signal_index;
        ++seed;
      }
    }
  }
}

// Inline messages of odd sizes between unaligned buffers, several in a row with increasing
// flags through one mailbox per rank, in every form: each lands byte for byte and nothing
// beside it is written.
TEST_F(GpuDeviceApiTest, InlinePutAndWaitInEveryFormAndSize) {
  constexpr size_t kLargest = 4099;
  constexpr size_t kWindow = kLargest + 16;  // room for the offsets and guards
  KindRegion mailbox(inline_mailbox_bytes(kLargest), TCA_MEM_GPU);
  KindRegion src(kWindow, TCA_MEM_GPU);
  KindRegion dst(kWindow, TCA_MEM_GPU);
  ASSERT_TRUE(mailbox.ok() && src.ok() && dst.ok());
  ASSERT_CUDA_OK(cudaMemset(mailbox.data(), 0, mailbox.size()));  // no flag before the first
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  DeviceCounters mismatches(1);
  ASSERT_TCA_OK(tcaBarrier());
  Stream stream;
  RingInline ring = {};
  ASSERT_TCA_OK(tcaDevicePointer(reinterpret_cast<void**>(&ring.remote_mailbox), &mailbox.of(next_),
                                 0, mailbox.size()));
  ring.own_mailbox = reinterpret_cast<const uint64_t*>(mailbox.data());
  ring.src = src.data();
  ring.dst = dst.data();
  ring.rank = rank_;
  ring.prev = prev_;
  ASSERT_TCA_OK(tcaDeviceSignal(&ring.remote_ack, prev_, 0));
  ASSERT_TCA_OK(tcaDeviceSignal(&ring.own_ack, rank_, 0));
  ring.mismatches = reinterpret_cast<unsigned long long*>(mismatches.at(0));
  ring.rounds = 4;
  for (PutForm form : {PutForm::kThread, PutForm::kWarp, PutForm::kBlock}) {
    for (size_t bytes : {1, 2, 3, 4, 5, 7, 8, 9, 13, 31, 33, 127, 129, 1000, 1023, 4093, 4099}) {
      // {src offset, dst offset}: aligned, and misaligned against 4 and 8 and each other.
      for (const auto& [src_offset, dst_offset] :
           {std::pair<size_t, size_t>{0, 8}, {1, 3}, {6, 9}, {4, 13}}) {
        SCOPED_TRACE(::testing::Message()
                     << "form " << static_cast<int>(form) << ", " << bytes << " bytes, src offset "
                     << src_offset << ", dst offset " << dst_offset);
        ASSERT_TRUE(dst.poison_range(0, dst.size()));
        ring.src_offset = src_offset;
        ring.dst_offset = dst_offset;
        ring.dst_bytes = dst.size();
        ring.bytes = bytes;
        ASSERT_CUDA_OK(run_inline_ring(form, ring, stream.get()));
        ASSERT_CUDA_OK(cudaStreamSynchronize(stream.get()));
        ASSERT_EQ(read_counter(mismatches.at(0)), 0u) << "wrong bytes in the destination window";
        ring.first_flag += static_cast<uint32_t>(ring.rounds);
        ring.ack_base += static_cast<uint64_t>(ring.rounds);
      }
    }
  }
  ASSERT_TCA_OK(tcaBarrier());  // every rank has taken its last message
}

TEST_F(GpuDeviceApiTest, PointersAndSignalsAreChecked) {
  KindRegion region(4096, TCA_MEM_GPU);
  ASSERT_TRUE(region.ok());
  void* ptr = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaDevicePointer(&ptr, &region.of(next_), 4000, 97));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaDevicePointer(nullptr, &region.of(next_), 0, 1));
  uint64_t* signal = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaDeviceSignal(&signal, next_, TCA_DEVICE_SIGNALS));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaDeviceSignal(&signal, size_, 0));
  EXPECT_TCA_OK(tcaDevicePointer(&ptr, &region.of(next_), 4095, 1));
}

// ---- the CUDA transport's environment ----

// Malformed settings fail tcaInit with a message and leave tca down; no GPU is needed, since
// the settings are read before the device is.
TEST(CudaEnvironment, BadValuesFailInit) {
  const std::pair<const char*, const char*> bad[] = {
      {"TCA_CUDA_PATH", "fastest"},
      {"TCA_CUDA_CROSSOVER", "64K"},
      {"TCA_CUDA_CROSSOVER", "-1"},
      {"TCA_CUDA_RESIDENT_IDLE_US", "0"},
      {"TCA_CUDA_RESIDENT_IDLE_US", "1000001"},
      {"TCA_CUDA_RESIDENT_IDLE_US", "soon"},
  };
  for (const auto& [name, value] : bad) {
    SCOPED_TRACE(::testing::Message() << name << "=" << value);
    ScopedEnvironment setting(name, value);
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaInit());
    int rank = 0;
    EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaRank(&rank));
  }
  ScopedEnvironment longest("TCA_CUDA_RESIDENT_IDLE_US", "1000000");
  ASSERT_TCA_OK(tcaInit());
  ASSERT_TCA_OK(tcaFinalize());
}

// ---- GPU memory: what it refuses ----

TEST_F(GpuDeviceApiTest, GpuMemoryErrors) {
  KindRegion region(4096, TCA_MEM_GPU);
  ASSERT_TRUE(region.ok());
  void* pio = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_UNSUPPORTED, tcaPIOPointer(&pio, &region.of(next_), 0, 8));
  Stream stream;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_RANK, tcaWaitDMARecvDescStream(TCA_ANY_RANK, 0, stream.get()));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_SLOT,
                   tcaWaitDMARecvDescStream(prev_, TCA_NOTIFY_SLOTS, stream.get()));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_SLOT,
                   tcaWaitDMARecvDescStream(prev_, TCA_USER_NOTIFY_SLOTS, stream.get()));

  // Host memory registered as GPU memory, and GPU memory past its allocation.
  std::vector<uint8_t> host(64);
  tcaHandle handle{};
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCreateHandle(&handle, host.data(), host.size(), TCA_MEM_GPU));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS,
                   tcaCreateHandle(&handle, region.data() + 100, size_t{1} << 30, TCA_MEM_GPU));

  // A chain of CPU transfers on the default path cannot be stream-ordered.
  KindRegion cpu(4096, TCA_MEM_CPU);
  ASSERT_TRUE(cpu.ok());
  Desc desc;
  ASSERT_TCA_OK(tcaDescSetMemcpy(desc.get(), &cpu.of(next_), 0, &cpu.mine(), 0, 8, 0, 0));
  ASSERT_TCA_OK(tcaDescSet(desc.get(), 0));
  EXPECT_TCA_ERROR(TCA_ERROR_UNSUPPORTED, tcaStartDMADescStream(desc.get(), stream.get()));
}

TEST_F(GpuDeviceApiTest, FreedGpuRegionStopsAChain) {
  KindRegion src(4096, TCA_MEM_GPU);
  KindRegion dst(4096, TCA_MEM_GPU);
  ASSERT_TRUE(src.ok() && dst.ok());
  Desc desc;
  ASSERT_TCA_OK(tcaDescSetMemcpy(desc.get(), &dst.of(next_), 0, &src.mine(), 0, 64, 0, 0));
  ASSERT_TCA_OK(tcaDescSet(desc.get(), 0));
  ASSERT_TCA_OK(tcaBarrier());
  ASSERT_TCA_OK(dst.free_now());
  ASSERT_TCA_OK(tcaBarrier());
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, tcaStartDMADesc(desc.get()));
}

// ---- automatic path choice ----

// Each calibrated size picks the faster engine, a size between two calibrated ones the pick of
// the one below, and every size from the crossover on the copy engines.
TEST_F(GpuDeviceApiTest, AutomaticPathFollowsTheCalibration) {
  const auto auto_path = [&](size_t bytes) {
    tcaPath path = TCA_PATH_AUTO;
    EXPECT_TCA_OK(tcaCudaAutoPath(next_, bytes, &path));
    return path;
  };
  size_t crossover = 0;
  ASSERT_TCA_OK(tcaCudaCrossover(next_, &crossover));
  for (size_t bytes : {size_t{8}, size_t{4096}, size_t{1} << 20, size_t{256} << 20}) {
    if (bytes >= crossover) {
      EXPECT_EQ(auto_path(bytes), TCA_PATH_CUDA_CE) << bytes << " bytes";
    }
  }
  if (std::getenv("TCA_CUDA_PATH") != nullptr || std::getenv("TCA_CUDA_CROSSOVER") != nullptr) {
    for (size_t bytes : {size_t{8}, size_t{4096}, size_t{1} << 20}) {
      if (bytes < crossover) {
        EXPECT_EQ(auto_path(bytes), TCA_PATH_CUDA_SM) << bytes << " bytes";
      }
    }
    GTEST_SKIP() << "the calibration is overridden by the environment";
  }
  std::vector<tcaCudaCalibrationPoint> points(64);
  int count = 0;
  ASSERT_TCA_OK(tcaCudaCalibration(next_, points.data(), static_cast<int>(points.size()), &count));
  ASSERT_GT(count, 0) << "no calibration to rank " << next_;
  const auto faster = [&](int i) {
    return points[i].sm_gbps > points[i].copy_engine_gbps ? TCA_PATH_CUDA_SM : TCA_PATH_CUDA_CE;
  };
  EXPECT_EQ(auto_path(1), faster(0));
  for (int i = 0; i < count; ++i) {
    SCOPED_TRACE(::testing::Message() << points[i].bytes << " bytes");
    if (i > 0) {
      EXPECT_GT(points[i].bytes, points[i - 1].bytes);
    }
    EXPECT_GT(points[i].copy_engine_gbps, 0.0);
    EXPECT_GT(points[i].sm_gbps, 0.0);
    EXPECT_EQ(auto_path(points[i].bytes), faster(i));
    EXPECT_EQ(auto_path(points[i].bytes + points[i].bytes / 2 + 1), faster(i));
    if (points[i].bytes >= crossover) {
      EXPECT_EQ(faster(i), TCA_PATH_CUDA_CE);
    }
  }
  EXPECT_EQ(auto_path(SIZE_MAX), faster(count - 1));
  if (rank_ == 0) {
    std::printf("[ info ] auto path to rank %d (crossover %zu):", next_, crossover);
    for (int i = 0; i < count; ++i)
      std::printf(" %zu:%s", points[i].bytes, faster(i) == TCA_PATH_CUDA_CE ? "CE" : "SM");
    std::printf("\n");
  }
}

}  // namespace
}  // namespace tca_test
