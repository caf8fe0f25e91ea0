// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "gpu_test_util.h"

#include <mpi.h>

#include <cstdlib>

namespace tca_test {

::testing::AssertionResult cuda_succeeded(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << call << " returned " << cudaGetErrorName(error) << ": " << cudaGetErrorString(error);
}

// ---- regions and CUDA resources ----

::testing::AssertionResult KindRegion::write(size_t offset, const void* bytes, size_t count) {
  if (kind() == TCA_MEM_CPU) return SharedRegion::write(offset, bytes, count);
  // From pageable memory cudaMemcpy may return before the copy lands: wait for it, so that no
  // peer's transfer races with it.
  const cudaError_t copied = cudaMemcpy(data() + offset, bytes, count, cudaMemcpyHostToDevice);
  return cuda_succeeded(copied == cudaSuccess ? cudaDeviceSynchronize() : copied,
                        "cudaMemcpy to the GPU region");
}

::testing::AssertionResult KindRegion::read(size_t offset, void* bytes, size_t count) const {
  if (kind() == TCA_MEM_CPU) return SharedRegion::read(offset, bytes, count);
  return cuda_succeeded(cudaMemcpy(bytes, data() + offset, count, cudaMemcpyDeviceToHost),
                        "cudaMemcpy from the GPU region");
}

DeviceCounters::DeviceCounters(size_t count) {
  EXPECT_CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(uint64_t)));
  EXPECT_CUDA_OK(cudaMemset(data_, 0, count * sizeof(uint64_t)));
  EXPECT_CUDA_OK(cudaDeviceSynchronize());  // zero before the test's own streams use them
}

uint64_t read_counter(const uint64_t* counter) {
  uint64_t value = 0;
  EXPECT_CUDA_OK(cudaMemcpy(&value, counter, sizeof(value), cudaMemcpyDeviceToHost));
  return value;
}

// ---- fixture ----

void GpuTest::SetUp() {
  rank_ = world_rank();
  size_ = world_size();
  next_ = (rank_ + 1) % size_;
  prev_ = (rank_ + size_ - 1) % size_;
  // Without any GPU (CI) skip before paying for an init cycle.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  cudaGetLastError();
  int has_gpu = devices > 0 ? 1 : 0;
  int everywhere = 0;
  MPI_Allreduce(&has_gpu, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!everywhere) GTEST_SKIP() << "needs a GPU on every rank";

  const tcaConfig config{nullptr, kTestTimeoutMs};
  ASSERT_TCA_OK(tcaInitWithConfig(&config));
  initialized_ = true;
  int usable = tcaCudaDevice(&device_) == TCA_SUCCESS ? 1 : 0;
  for (int peer : needed_peers()) {
    int available = 0;
    ASSERT_TCA_OK(tcaPathAvailable(TCA_PATH_CUDA, peer, &available));
    usable &= available;
  }
  MPI_Allreduce(&usable, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  // On fake hosts (TCA_HOST_ID) CUDA IPC joins no two hosts by design; the suites run there
  // (the collectives) reach the other hosts through the transports between hosts.
  if (!everywhere && std::getenv("TCA_HOST_ID") == nullptr)
    GTEST_SKIP() << "needs every rank's GPU to reach its peers' GPUs";
}

void GpuTest::TearDown() {
  if (initialized_) {
    EXPECT_TCA_OK(tcaFinalize());
  }
  initialized_ = false;
}

std::vector<GpuCase> every_gpu_case() {
  std::vector<GpuCase> cases;
  for (tcaPath path : {TCA_PATH_CUDA_CE, TCA_PATH_CUDA_SM, TCA_PATH_CUDA_RESIDENT, TCA_PATH_CUDA})
    for (tcaMemKind src : {TCA_MEM_CPU, TCA_MEM_GPU})
      for (tcaMemKind dst : {TCA_MEM_CPU, TCA_MEM_GPU}) cases.push_back({src, dst, path});
  return cases;
}

std::string gpu_case_name(const ::testing::TestParamInfo<GpuCase>& info) {
  return std::string(kind_name(info.param.src)) + "_to_" + kind_name(info.param.dst) + "_" +
         path_name(info.param.path);
}

}  // namespace tca_test
