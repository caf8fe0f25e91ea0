// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// GPU memory through the UCX transport between ranks on different hosts as tca sees them (run
// with TCA_HOST_ID=cyclic:2, two ranks sharing one GPU: the CUDA transport reaches no peer, so
// UCX is the only path): GPU->GPU, CPU->GPU and GPU->CPU, pushed and pulled by descriptors on
// TCA_PATH_UCX and by tcaPut / tcaGet on AUTO, at sizes from 1 byte to 256 MiB with odd offsets.
// Destinations start poisoned and are compared byte for byte, guards included. Every case skips
// where a rank has no GPU (CI).
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "cuda/gpu_test_util.h"

namespace tca_test {
namespace {

struct UcxGpuCase {
  tcaMemKind src;
  tcaMemKind dst;
};

class UcxGpuTest : public ::testing::TestWithParam<UcxGpuCase> {
 protected:
  static constexpr int kTimeoutMs = 120000;

  void SetUp() override {
    rank_ = world_rank();
    size_ = world_size();
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
    cudaGetLastError();
    int usable = devices > 0 ? 1 : 0;
    int everywhere = 0;
    MPI_Allreduce(&usable, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!everywhere) GTEST_SKIP() << "needs a GPU on every rank";
    const tcaConfig config{nullptr, kTimeoutMs};
    ASSERT_TCA_OK(tcaInitWithConfig(&config));
    initialized_ = true;
    int device = -1;
    usable = tcaCudaDevice(&device) == TCA_SUCCESS ? 1 : 0;
    MPI_Allreduce(&usable, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!everywhere) GTEST_SKIP() << "needs tca's CUDA transport on every rank";
    // The peers are on other hosts: only UCX reaches their GPUs.
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      int cuda = -1;
      int ucx = -1;
      ASSERT_TCA_OK(tcaPathAvailable(TCA_PATH_CUDA, peer, &cuda));
      ASSERT_TCA_OK(tcaPathAvailable(TCA_PATH_UCX, peer, &ucx));
      EXPECT_EQ(cuda, 0) << "peer " << peer << " should be on another host (TCA_HOST_ID)";
      EXPECT_EQ(ucx, 1) << "peer " << peer;
    }
  }
  void TearDown() override {
    if (initialized_) {
      EXPECT_TCA_OK(tcaFinalize());
    }
  }

  int rank_ = 0;
  int size_ = 1;
  bool initialized_ = false;
};

const std::vector<SweepCase> kSweep = {
    {1, 0, 0},          {1, 7, 3},         {3, 1, 6},
    {8, 0, 0},          {4095, 1, 4097},   {4097, 4095, 1},
    {65537, 13, 7},     {kMiB + 13, 9, 5}, {16 * kMiB + 3, 3, 5},
    {256 * kMiB, 0, 0},
};

void sweep(Method method, tcaPath path, const UcxGpuCase& c) {
  KindRegion src(sweep_src_bytes(kSweep), c.src);
  KindRegion dst(sweep_dst_bytes(kSweep), c.dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  run_sweep(method, path, kSweep, src, dst);
}

INSTANTIATE_TEST_SUITE_P(Ucx, UcxGpuTest,
                         ::testing::Values(UcxGpuCase{TCA_MEM_GPU, TCA_MEM_GPU},
                                           UcxGpuCase{TCA_MEM_CPU, TCA_MEM_GPU},
                                           UcxGpuCase{TCA_MEM_GPU, TCA_MEM_CPU}),
                         [](const ::testing::TestParamInfo<UcxGpuCase>& info) {
                           return std::string(kind_name(info.param.src)) + "_to_" +
                                  kind_name(info.param.dst);
                         });

TEST_P(UcxGpuTest, SizesUpTo256MiBByDescriptorPush) {
  sweep(Method::kDescPush, TCA_PATH_UCX, GetParam());
}
TEST_P(UcxGpuTest, SizesUpTo256MiBByDescriptorPull) {
  sweep(Method::kDescPull, TCA_PATH_UCX, GetParam());
}
// AUTO: with a GPU end on another host, the registry's only choice is UCX.
TEST_P(UcxGpuTest, SizesUpTo256MiBByPutAndGetOnAuto) {
  sweep(Method::kPut, TCA_PATH_AUTO, GetParam());
  sweep(Method::kGet, TCA_PATH_AUTO, GetParam());
}

TEST_P(UcxGpuTest, BlockStrideRowsOneByOne) {
  KindRegion src(256 * kKiB, GetParam().src);
  KindRegion dst(256 * kKiB, GetParam().dst);
  ASSERT_TRUE(src.ok() && dst.ok());
  const std::vector<Copy> cases = {
      Copy::strided(5, 100, 3, 37, 13, 1), Copy::strided(1, 29, 0, 13, 13, 64),
      Copy::strided(9, 4100, 11, 5000, 4097, 9), Copy::strided(17, 1031, 6, 517, 515, 201)};
  run_each_copy(TCA_PATH_UCX, cases, src, dst);
}

}  // namespace
}  // namespace tca_test
