#include "gpu_test_util.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>

namespace tca_test {

::testing::AssertionResult cuda_succeeded(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << call << " returned " << cudaGetErrorName(error) << ": "
                                       << cudaGetErrorString(error);
}

const char* kind_name(tcaMemKind kind) { return kind == TCA_MEM_GPU ? "gpu" : "cpu"; }

const char* path_name(tcaPath path) {
  switch (path) {
    case TCA_PATH_CUDA_CE: return "ce";
    case TCA_PATH_CUDA_SM: return "sm";
    case TCA_PATH_CUDA: return "auto";
    default: return "other";
  }
}

// ---- regions ----

KindRegion::KindRegion(size_t bytes, tcaMemKind kind)
    : bytes_(bytes), kind_(kind), rank_(world_rank()), handles_(world_size()) {
  void* data = nullptr;
  const bool allocated = succeeded(tcaMalloc(&data, bytes, kind), "tcaMalloc");
  EXPECT_TRUE(allocated) << tcaGetLastErrorMessage();
  if (!allocated) return;
  data_ = static_cast<uint8_t*>(data);
  tcaHandle mine{};
  EXPECT_TCA_OK(tcaCreateHandle(&mine, data_, bytes, kind));
  EXPECT_TCA_OK(tcaAllgatherHandles(&mine, handles_.data()));
  ok_ = !::testing::Test::HasFailure();
}

KindRegion::~KindRegion() {
  EXPECT_TCA_OK(tcaBarrier());  // nobody still reads or writes it
  if (data_ != nullptr) {
    EXPECT_TCA_OK(tcaFree(data_));
  }
}

tcaResult KindRegion::free_now() {
  const tcaResult result = tcaFree(data_);
  data_ = nullptr;
  return result;
}

::testing::AssertionResult KindRegion::write(size_t offset, const void* bytes, size_t count) {
  if (kind_ == TCA_MEM_CPU) {
    std::memcpy(data_ + offset, bytes, count);
    return ::testing::AssertionSuccess();
  }
  // From pageable memory cudaMemcpy may return before the copy lands: wait for it, so that no
  // peer's transfer races with it.
  const cudaError_t copied = cudaMemcpy(data_ + offset, bytes, count, cudaMemcpyHostToDevice);
  return cuda_succeeded(copied == cudaSuccess ? cudaDeviceSynchronize() : copied,
                        "cudaMemcpy to the GPU region");
}

::testing::AssertionResult KindRegion::read(size_t offset, void* bytes, size_t count) const {
  if (kind_ == TCA_MEM_CPU) {
    std::memcpy(bytes, data_ + offset, count);
    return ::testing::AssertionSuccess();
  }
  return cuda_succeeded(cudaMemcpy(bytes, data_ + offset, count, cudaMemcpyDeviceToHost),
                        "cudaMemcpy from the GPU region");
}

::testing::AssertionResult KindRegion::poison_range(size_t from, size_t to) {
  std::vector<uint8_t> bytes(to - from);
  poison(bytes.data(), bytes.size());
  return write(from, bytes.data(), bytes.size());
}

::testing::AssertionResult KindRegion::fill_range(const Pattern& pattern, size_t from, size_t to) {
  std::vector<uint8_t> bytes(to - from);
  fill_pattern(bytes.data(), bytes.size(), pattern, from);
  return write(from, bytes.data(), bytes.size());
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
  for (int peer : {next_, prev_}) {
    int available = 0;
    ASSERT_TCA_OK(tcaPathAvailable(TCA_PATH_CUDA, peer, &available));
    usable &= available;
  }
  MPI_Allreduce(&usable, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!everywhere) GTEST_SKIP() << "needs every rank's GPU to reach its neighbours' GPUs";
}

void GpuTest::TearDown() {
  if (initialized_) {
    EXPECT_TCA_OK(tcaFinalize());
  }
  initialized_ = false;
}

std::vector<GpuCase> every_gpu_case() {
  std::vector<GpuCase> cases;
  for (tcaPath path : {TCA_PATH_CUDA_CE, TCA_PATH_CUDA_SM, TCA_PATH_CUDA})
    for (tcaMemKind src : {TCA_MEM_CPU, TCA_MEM_GPU})
      for (tcaMemKind dst : {TCA_MEM_CPU, TCA_MEM_GPU}) cases.push_back({src, dst, path});
  return cases;
}

std::string gpu_case_name(const ::testing::TestParamInfo<GpuCase>& info) {
  return std::string(kind_name(info.param.src)) + "_to_" + kind_name(info.param.dst) + "_" +
         path_name(info.param.path);
}

// ---- the ring exchange ----

void gpu_ring_exchange(Method method, tcaPath path, const std::vector<Copy>& copies,
                       KindRegion& src, KindRegion& dst, uint64_t seed, size_t check_from,
                       size_t check_to) {
  const int rank = world_rank();
  const int size = world_size();
  const int next = (rank + 1) % size;
  const int prev = (rank + size - 1) % size;
  const int channel = static_cast<int>(seed % TCA_DMA_CHANNELS);
  const int slot = static_cast<int>(seed % TCA_NOTIFY_SLOTS);

  size_t read_from = src.size();
  size_t read_to = 0;
  for (const Copy& copy : copies) {
    read_from = std::min(read_from, copy.src_offset);
    read_to = std::max(read_to, copy.src_end());
  }
  ASSERT_TRUE(dst.poison_range(check_from, check_to));
  ASSERT_TRUE(src.fill_range(Pattern{rank, seed}, read_from, read_to));
  ASSERT_TCA_OK(tcaBarrier());

  const bool push = method == Method::kDescPush;
  switch (method) {
    case Method::kDescPush:
    case Method::kDescPull: {
      Desc desc;
      for (size_t i = 0; i < copies.size(); ++i) {
        const unsigned flags = i + 1 == copies.size() ? TCA_FLAG_NOTIFY : 0u;
        ASSERT_TCA_OK(append_copy(desc.get(), push ? dst.of(next) : dst.mine(),
                                  push ? src.mine() : src.of(prev), copies[i], flags, slot));
      }
      ASSERT_TCA_OK(tcaDescSetPath(desc.get(), path));
      ASSERT_TCA_OK(tcaDescSet(desc.get(), channel));
      ASSERT_TCA_OK(tcaStartDMADesc(desc.get()));
      ASSERT_TCA_OK(tcaWaitDMAC(channel));
      // A pull's destination is local: the notification is this rank's own.
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(push ? prev : rank, slot, nullptr));
      break;
    }
    case Method::kPut:
      for (const Copy& copy : copies) {
        ASSERT_FALSE(copy.blocks);
        ASSERT_TCA_OK(tcaPut(&dst.of(next), copy.dst_offset, src.data() + copy.src_offset,
                             copy.width));
      }
      ASSERT_TCA_OK(tcaNotify(next, slot));
      ASSERT_TCA_OK(tcaWaitDMARecvDesc(prev, slot, nullptr));
      break;
    case Method::kGet:
      for (const Copy& copy : copies) {
        ASSERT_FALSE(copy.blocks);
        ASSERT_TCA_OK(tcaGet(dst.data() + copy.dst_offset, &src.of(prev), copy.src_offset,
                             copy.width));
      }
      break;
  }

  ExpectedImage expected(check_from, check_to - check_from);
  for (const Copy& copy : copies) expected.apply(copy, Pattern{prev, seed});
  std::vector<uint8_t> landed(check_to);
  ASSERT_TRUE(dst.read(check_from, landed.data() + check_from, check_to - check_from));
  EXPECT_TRUE(expected.matches(landed.data()))
      << "by " << method_name(method) << " on path " << path_name(path) << " from rank " << prev
      << " (" << kind_name(src.kind()) << ") into rank " << rank << " (" << kind_name(dst.kind())
      << ")";
  ASSERT_TCA_OK(tcaBarrier());
}

}  // namespace tca_test
