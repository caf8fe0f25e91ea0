// Data movement on the CUDA paths in all four memory combinations (CPU->CPU, CPU->GPU,
// GPU->CPU, GPU->GPU) and on the copy-engine, SM and automatic paths: the checks of the CPU
// suite (sizes and odd offsets, block-stride, halo faces, chains, repeated kicks) plus
// notification ordering. Destinations start poisoned and are compared byte for byte.
#include <algorithm>
#include <vector>

#include "gpu_test_util.h"

namespace tca_test {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr size_t kGuardBytes = 4096;

INSTANTIATE_TEST_SUITE_P(Cuda, GpuTransferTest, ::testing::ValuesIn(every_gpu_case()),
                         gpu_case_name);

// ---- sizes with odd offsets at both ends ----

struct SweepCase {
  size_t bytes;
  size_t src_offset;
  size_t dst_offset;  // past the leading guard
};
const SweepCase kSweep[] = {
    {1, 0, 0},         {1, 7, 3},        {3, 1, 6},         {8, 0, 0},
    {15, 3, 1},        {4095, 1, 4097},  {4096, 0, 16},     {65537, 13, 7},
    {kMiB + 13, 9, 5}, {16 * kMiB, 0, 0}, {16 * kMiB + 3, 3, 5},
};

void sweep_sizes(Method method, const GpuCase& c) {
  size_t src_bytes = 0;
  size_t dst_bytes = 0;
  for (const SweepCase& s : kSweep) {
    src_bytes = std::max(src_bytes, s.src_offset + s.bytes);
    dst_bytes = std::max(dst_bytes, kGuardBytes + s.dst_offset + s.bytes + kGuardBytes);
  }
  KindRegion src(src_bytes, c.src);
  KindRegion dst(dst_bytes, c.dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  uint64_t seed = 1;
  for (const SweepCase& s : kSweep) {
    SCOPED_TRACE(::testing::Message() << s.bytes << " bytes, src offset " << s.src_offset
                                      << ", dst offset " << kGuardBytes + s.dst_offset);
    const size_t dst_offset = kGuardBytes + s.dst_offset;
    ASSERT_NO_FATAL_FAILURE(gpu_ring_exchange(method, c.path,
                                              {Copy::linear(dst_offset, s.src_offset, s.bytes)},
                                              src, dst, seed++, dst_offset - kGuardBytes,
                                              dst_offset + s.bytes + kGuardBytes));
  }
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
      Copy::strided(5, 100, 3, 37, 13, 1),        Copy::strided(1, 29, 0, 13, 13, 64),
      Copy::strided(0, 13, 7, 29, 13, 64),        Copy::strided(3, 3, 1, 1, 1, 1000),
      Copy::strided(9, 4100, 11, 5000, 4097, 9),  Copy::strided(2, 7, 5, 11, 7, 333),
      Copy::strided(17, 1031, 6, 517, 515, 201),  Copy::strided(0, 4096, 0, 4096, 1024, 60),
      Copy::strided(16, 32, 32, 64, 16, 2000),
  };
  uint64_t seed = 100;
  for (Method method : {Method::kDescPush, Method::kDescPull}) {
    for (const Copy& copy : cases) {
      SCOPED_TRACE(::testing::Message()
                   << method_name(method) << ": width " << copy.width << " x " << copy.count
                   << ", dst pitch " << copy.dst_pitch << ", src pitch " << copy.src_pitch);
      ASSERT_NO_FATAL_FAILURE(
          gpu_ring_exchange(method, GetParam().path, {copy}, src, dst, seed++, 0, dst.size()));
    }
  }
}

// The planes of constant x, y and z of an nx*ny*nz grid of `element`-byte cells, x fastest.
struct Grid {
  size_t nx, ny, nz, element;
  size_t bytes() const { return nx * ny * nz * element; }
  size_t cell(size_t i, size_t j, size_t k) const { return ((k * ny + j) * nx + i) * element; }
  Copy x_face(size_t dst_index, size_t src_index) const {
    return Copy::strided(cell(dst_index, 0, 0), nx * element, cell(src_index, 0, 0),
                         nx * element, element, ny * nz);
  }
  Copy y_face(size_t dst_index, size_t src_index) const {
    return Copy::strided(cell(0, dst_index, 0), nx * ny * element, cell(0, src_index, 0),
                         nx * ny * element, nx * element, nz);
  }
  Copy z_face(size_t dst_index, size_t src_index) const {
    return Copy::strided(cell(0, 0, dst_index), nx * ny * element, cell(0, 0, src_index),
                         nx * ny * element, nx * ny * element, 1);
  }
};

TEST_P(GpuTransferTest, HaloFacesInEveryOrientation) {
  for (const Grid& grid : {Grid{6, 5, 7, 3}, Grid{64, 32, 16, 8}}) {
    KindRegion src(grid.bytes(), GetParam().src);
    KindRegion dst(grid.bytes(), GetParam().dst);
    ASSERT_TRUE(src.ok() && dst.ok());
    const std::vector<std::pair<const char*, Copy>> faces = {
        {"x low", grid.x_face(0, grid.nx - 2)}, {"x high", grid.x_face(grid.nx - 1, 1)},
        {"y low", grid.y_face(0, grid.ny - 2)}, {"y high", grid.y_face(grid.ny - 1, 1)},
        {"z low", grid.z_face(0, grid.nz - 2)}, {"z high", grid.z_face(grid.nz - 1, 1)},
    };
    uint64_t seed = 200;
    for (Method method : {Method::kDescPush, Method::kDescPull}) {
      for (const auto& face : faces) {
        SCOPED_TRACE(::testing::Message() << method_name(method) << ", face " << face.first
                                          << ", element " << grid.element);
        ASSERT_NO_FATAL_FAILURE(gpu_ring_exchange(method, GetParam().path, {face.second}, src,
                                                  dst, seed++, 0, dst.size()));
      }
    }
    // All six faces in one chain, as a halo exchange kicks them.
    std::vector<Copy> all;
    for (const auto& face : faces) all.push_back(face.second);
    ASSERT_NO_FATAL_FAILURE(gpu_ring_exchange(Method::kDescPush, GetParam().path, all, src, dst,
                                              seed++, 0, dst.size()));
  }
}

// ---- chains ----

// `length` transfers back to back with small gaps, every 7th one block-stride.
std::vector<Copy> chain_layout(size_t length, size_t region_bytes) {
  std::vector<Copy> chain;
  size_t dst_cursor = 1;
  size_t src_cursor = 2;
  for (size_t i = 0; i < length; ++i) {
    Copy copy = i % 7 == 3
                    ? Copy::strided(dst_cursor, 23, src_cursor, 31, 1 + i % 19, 3)
                    : Copy::linear(dst_cursor, src_cursor, 1 + (i * 37) % 97 + (i % 5 == 0) * 600);
    dst_cursor = copy.dst_end() + 1 + i % 3;
    src_cursor = copy.src_end() + i % 4;
    EXPECT_LE(std::max(dst_cursor, src_cursor), region_bytes) << "test bug: chain too long";
    chain.push_back(copy);
  }
  return chain;
}

TEST_P(GpuTransferTest, ChainsOfOneToManyTransfers) {
  constexpr size_t kRegionBytes = 512 * kKiB;
  KindRegion src(kRegionBytes, GetParam().src);
  KindRegion dst(kRegionBytes, GetParam().dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  uint64_t seed = 300;
  for (Method method : {Method::kDescPush, Method::kDescPull}) {
    for (size_t length : {1, 2, 3, 16, 255, 1024}) {
      SCOPED_TRACE(::testing::Message() << method_name(method) << ", chain of " << length);
      ASSERT_NO_FATAL_FAILURE(gpu_ring_exchange(method, GetParam().path,
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
      Copy::linear(100, 0, 20000),
      Copy::linear(5000, 30000, 1000),                 // inside the first
      Copy::strided(4990, 64, 40000, 100, 32, 50),     // across both
      Copy::linear(4000, 50000, 8000),                 // over all of them
  };
  ASSERT_NO_FATAL_FAILURE(
      gpu_ring_exchange(Method::kDescPush, GetParam().path, chain, src, dst, 350, 0, dst.size()));
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
    ASSERT_NO_FATAL_FAILURE(gpu_ring_exchange(
        Method::kDescPush, GetParam().path,
        {Copy::linear(0, 0, kLarge), Copy::linear(kLarge + 8, kLarge + 8, 8)}, src, dst, seed,
        0, dst.size()));
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

}  // namespace
}  // namespace tca_test
