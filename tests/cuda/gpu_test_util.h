// Helpers of the GPU test programs: regions of either memory kind on every rank, host-side
// access to them, the fixture that skips where no GPU path exists, and the GPU form of the
// ring exchange that the CPU suite runs (same patterns, same reference model).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "tca/tca_cuda.h"
#include "test_util.h"

namespace tca_test {

::testing::AssertionResult cuda_succeeded(cudaError_t error, const char* call);
#define ASSERT_CUDA_OK(call) ASSERT_TRUE(::tca_test::cuda_succeeded((call), #call))
#define EXPECT_CUDA_OK(call) EXPECT_TRUE(::tca_test::cuda_succeeded((call), #call))

const char* kind_name(tcaMemKind kind);
const char* path_name(tcaPath path);

// Collective: every rank allocates `bytes` of `kind` with tcaMalloc, registers them and learns
// every rank's handle. Destruction waits at a barrier, then frees.
class KindRegion {
 public:
  KindRegion(size_t bytes, tcaMemKind kind);
  ~KindRegion();
  KindRegion(const KindRegion&) = delete;
  KindRegion& operator=(const KindRegion&) = delete;

  bool ok() const { return ok_; }
  uint8_t* data() const { return data_; }  // a device pointer for GPU memory
  size_t size() const { return bytes_; }
  tcaMemKind kind() const { return kind_; }
  const tcaHandle& mine() const { return handles_[rank_]; }
  const tcaHandle& of(int rank) const { return handles_[rank]; }
  tcaResult free_now();

  // Host-side access, through cudaMemcpy where the region is GPU memory.
  ::testing::AssertionResult write(size_t offset, const void* bytes, size_t count);
  ::testing::AssertionResult read(size_t offset, void* bytes, size_t count) const;
  ::testing::AssertionResult poison_range(size_t from, size_t to);
  // Bytes [from, to) get the pattern's bytes for those offsets.
  ::testing::AssertionResult fill_range(const Pattern& pattern, size_t from, size_t to);

 private:
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  tcaMemKind kind_ = TCA_MEM_CPU;
  int rank_ = 0;
  bool ok_ = false;
  std::vector<tcaHandle> handles_;
};

// Initializes tca for each case and skips it, on every rank alike, unless every rank has a
// GPU that reaches its ring neighbours through TCA_PATH_CUDA (CI has no GPU: all cases skip).
class GpuTest : public ::testing::Test {
 protected:
  static constexpr int kTestTimeoutMs = 30000;
  void SetUp() override;
  void TearDown() override;

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

// The ring exchange of the CPU suite on regions of any kind: every rank moves `copies` from its
// predecessor's `src` into its own `dst` by `method` on `path`, then checks [check_from,
// check_to) of `dst` byte for byte. Collective.
void gpu_ring_exchange(Method method, tcaPath path, const std::vector<Copy>& copies,
                       KindRegion& src, KindRegion& dst, uint64_t seed, size_t check_from,
                       size_t check_to);

}  // namespace tca_test
