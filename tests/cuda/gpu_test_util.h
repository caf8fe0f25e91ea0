// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Helpers of the GPU test programs: regions of either memory kind on every rank (the CPU
// suite's SharedRegion with host access through CUDA), CUDA resources owned by a test, and the
// fixture that skips where no GPU path exists. The ring exchange of the CPU suite
// (run_ring_exchange) runs on these regions as they are.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tca/tca_cuda.h"
#include "test_util.h"

namespace tca_test {

::testing::AssertionResult cuda_succeeded(cudaError_t error, const char* call);
#define ASSERT_CUDA_OK(call) ASSERT_TRUE(::tca_test::cuda_succeeded((call), #call))
#define EXPECT_CUDA_OK(call) EXPECT_TRUE(::tca_test::cuda_succeeded((call), #call))

// A SharedRegion of either memory kind; the host reaches GPU memory through cudaMemcpy.
class KindRegion : public SharedRegion {
 public:
  KindRegion(size_t bytes, tcaMemKind kind) : SharedRegion(bytes, kind) {}
  ::testing::AssertionResult write(size_t offset, const void* bytes, size_t count) override;
  ::testing::AssertionResult read(size_t offset, void* bytes, size_t count) const override;
};

// A stream owned by a test.
class Stream {
 public:
  // Non-blocking unless told: cudaStreamDefault makes one that follows the legacy stream.
  explicit Stream(unsigned flags = cudaStreamNonBlocking) {
    EXPECT_CUDA_OK(cudaStreamCreateWithFlags(&stream_, flags));
  }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Device memory for a few counters, zeroed.
class DeviceCounters {
 public:
  explicit DeviceCounters(size_t count);
  ~DeviceCounters() { cudaFree(data_); }
  DeviceCounters(const DeviceCounters&) = delete;
  DeviceCounters& operator=(const DeviceCounters&) = delete;
  uint64_t* at(size_t index) const { return data_ + index; }

 private:
  uint64_t* data_ = nullptr;
};

uint64_t read_counter(const uint64_t* counter);

// Initializes tca for each case and skips it, on every rank alike, unless every rank has a
// GPU that reaches those of needed_peers() through TCA_PATH_CUDA (CI has no GPU: all cases
// skip).
class GpuTest : public ::testing::Test {
 protected:
  static constexpr int kTestTimeoutMs = 30000;
  void SetUp() override;
  void TearDown() override;
  // The ranks whose GPUs every rank's GPU must reach for the case to run: its ring neighbours.
  virtual std::vector<int> needed_peers() const { return {next_, prev_}; }

  int rank_ = 0;
  int size_ = 1;
  int next_ = 0;
  int prev_ = 0;
  int device_ = -1;
  bool initialized_ = false;
};

// The four memory combinations of the seed paper (source kind, destination kind) on each CUDA
// path: the parameter of most transfer cases.
struct GpuCase {
  tcaMemKind src;
  tcaMemKind dst;
  tcaPath path;
};
std::vector<GpuCase> every_gpu_case();
std::string gpu_case_name(const ::testing::TestParamInfo<GpuCase>& info);

class GpuTransferTest : public GpuTest, public ::testing::WithParamInterface<GpuCase> {};

}  // namespace tca_test
