// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "test_util.h"

#ifdef TCA_TESTS_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <sstream>
#include <thread>

namespace tca_test {

// ---- results ----

const char* result_name(tcaResult result) {
  switch (result) {
    case TCA_SUCCESS:
      return "TCA_SUCCESS";
    case TCA_ERROR_INVALID_ARGUMENT:
      return "TCA_ERROR_INVALID_ARGUMENT";
    case TCA_ERROR_NOT_INITIALIZED:
      return "TCA_ERROR_NOT_INITIALIZED";
    case TCA_ERROR_ALREADY_INITIALIZED:
      return "TCA_ERROR_ALREADY_INITIALIZED";
    case TCA_ERROR_OUT_OF_MEMORY:
      return "TCA_ERROR_OUT_OF_MEMORY";
    case TCA_ERROR_OUT_OF_RESOURCES:
      return "TCA_ERROR_OUT_OF_RESOURCES";
    case TCA_ERROR_OUT_OF_BOUNDS:
      return "TCA_ERROR_OUT_OF_BOUNDS";
    case TCA_ERROR_SIZE_OVERFLOW:
      return "TCA_ERROR_SIZE_OVERFLOW";
    case TCA_ERROR_INVALID_HANDLE:
      return "TCA_ERROR_INVALID_HANDLE";
    case TCA_ERROR_FOREIGN_HANDLE:
      return "TCA_ERROR_FOREIGN_HANDLE";
    case TCA_ERROR_FREED_HANDLE:
      return "TCA_ERROR_FREED_HANDLE";
    case TCA_ERROR_INVALID_CHANNEL:
      return "TCA_ERROR_INVALID_CHANNEL";
    case TCA_ERROR_INVALID_DESC:
      return "TCA_ERROR_INVALID_DESC";
    case TCA_ERROR_INVALID_RANK:
      return "TCA_ERROR_INVALID_RANK";
    case TCA_ERROR_INVALID_SLOT:
      return "TCA_ERROR_INVALID_SLOT";
    case TCA_ERROR_UNREACHABLE:
      return "TCA_ERROR_UNREACHABLE";
    case TCA_ERROR_UNSUPPORTED:
      return "TCA_ERROR_UNSUPPORTED";
    case TCA_ERROR_TIMEOUT:
      return "TCA_ERROR_TIMEOUT";
    case TCA_ERROR_PEER_FAILED:
      return "TCA_ERROR_PEER_FAILED";
    case TCA_ERROR_TRANSPORT:
      return "TCA_ERROR_TRANSPORT";
    case TCA_ERROR_INTERNAL:
      return "TCA_ERROR_INTERNAL";
  }
  return "(not a tcaResult)";
}

::testing::AssertionResult succeeded(tcaResult result, const char* call) {
  if (result == TCA_SUCCESS) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << call << " returned " << result_name(result) << "; tcaGetLastErrorMessage: \""
         << tcaGetLastErrorMessage() << "\"";
}

::testing::AssertionResult failed_with(tcaResult expected, tcaResult result, const char* call) {
  if (result != expected) {
    return ::testing::AssertionFailure()
           << call << " returned " << result_name(result) << ", expected " << result_name(expected)
           << "; tcaGetLastErrorMessage: \"" << tcaGetLastErrorMessage() << "\"";
  }
  const char* message = tcaGetLastErrorMessage();
  if (message == nullptr || message[0] == '\0') {
    return ::testing::AssertionFailure() << call << " returned " << result_name(result)
                                         << " but tcaGetLastErrorMessage() is empty";
  }
  return ::testing::AssertionSuccess();
}

// ---- data patterns ----

namespace {

uint64_t mix64(uint64_t x) {  // splitmix64's finalizer: every input bit affects every output bit
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t pattern_key(const Pattern& pattern) {
  return mix64(static_cast<uint64_t>(pattern.rank) * 0x100000001b3ull ^ mix64(pattern.seed));
}

uint8_t never_poison(uint8_t byte) { return byte == kPoison ? static_cast<uint8_t>(~byte) : byte; }

std::string hex_byte(uint8_t byte) {
  static const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[byte >> 4] + digits[byte & 15];
}

}  // namespace

uint8_t pattern_byte(const Pattern& pattern, uint64_t offset) {
  const uint64_t word = mix64(pattern_key(pattern) ^ (offset >> 3));
  return never_poison(static_cast<uint8_t>(word >> (8 * (offset & 7))));
}

void fill_pattern(void* out, size_t bytes, const Pattern& pattern, uint64_t first_offset) {
  // One hash per 8 bytes keeps filling 64 MiB cheap.
  auto* dst = static_cast<uint8_t*>(out);
  const uint64_t key = pattern_key(pattern);
  uint64_t offset = first_offset;
  size_t done = 0;
  while (done < bytes) {
    const uint64_t word = mix64(key ^ (offset >> 3));
    for (unsigned lane = offset & 7; lane < 8 && done < bytes; ++lane, ++done, ++offset)
      dst[done] = never_poison(static_cast<uint8_t>(word >> (8 * lane)));
  }
}

void poison(void* out, size_t bytes) {
  if (bytes != 0) std::memset(out, kPoison, bytes);  // out may be null when there is nothing
}

Copy Copy::linear(size_t dst_offset, size_t src_offset, size_t bytes) {
  Copy copy;
  copy.dst_offset = dst_offset;
  copy.src_offset = src_offset;
  copy.width = bytes;
  return copy;
}

Copy Copy::strided(size_t dst_offset, size_t dst_pitch, size_t src_offset, size_t src_pitch,
                   size_t width, size_t count) {
  Copy copy{dst_offset, dst_pitch, src_offset, src_pitch, width, count, true};
  return copy;
}

size_t Copy::dst_end() const { return dst_offset + (count - 1) * dst_pitch + width; }
size_t Copy::src_end() const { return src_offset + (count - 1) * src_pitch + width; }

ExpectedImage::ExpectedImage(size_t offset, size_t bytes)
    : offset_(offset), bytes_(bytes, kPoison) {}

void ExpectedImage::apply(const Copy& copy, const Pattern& source) {
  for (size_t block = 0; block < copy.count; ++block) {
    const size_t dst = copy.dst_offset + block * copy.dst_pitch;
    const size_t src = copy.src_offset + block * copy.src_pitch;
    if (dst < offset_ || dst + copy.width > offset_ + bytes_.size()) {
      ADD_FAILURE() << "test bug: modelled copy [" << dst << ", " << dst + copy.width
                    << ") leaves the checked window";
      return;
    }
    fill_pattern(bytes_.data() + (dst - offset_), copy.width, source, src);
  }
}

::testing::AssertionResult ExpectedImage::matches(const void* region_base) const {
  const auto* got = static_cast<const uint8_t*>(region_base) + offset_;
  if (std::memcmp(got, bytes_.data(), bytes_.size()) == 0) return ::testing::AssertionSuccess();
  size_t wrong = 0;
  size_t first = bytes_.size();
  for (size_t i = 0; i < bytes_.size(); ++i) {
    if (got[i] == bytes_[i]) continue;
    if (wrong++ == 0) first = i;
  }
  const bool should_be_untouched = bytes_[first] == kPoison;
  return ::testing::AssertionFailure()
         << wrong << " wrong byte(s) in region window [" << offset_ << ", "
         << offset_ + bytes_.size() << "); first at offset " << offset_ + first << ": expected "
         << hex_byte(bytes_[first])
         << (should_be_untouched ? " (untouched poison)" : " (transferred data)") << ", got "
         << hex_byte(got[first]) << (got[first] == kPoison ? " (never written)" : "");
}

::testing::AssertionResult is_poison(const void* data, size_t bytes) {
  ExpectedImage untouched(0, bytes);
  return untouched.matches(data);
}

::testing::AssertionResult holds_pattern(const void* data, size_t bytes, const Pattern& pattern,
                                         uint64_t first_offset) {
  ExpectedImage image(0, bytes);
  image.apply(Copy::linear(0, first_offset, bytes), pattern);
  return image.matches(data);
}

// ---- names ----

const char* kind_name(tcaMemKind kind) { return kind == TCA_MEM_GPU ? "gpu" : "cpu"; }

const char* path_name(tcaPath path) {
  switch (path) {
    case TCA_PATH_AUTO:
      return "default";
    case TCA_PATH_SHM:
      return "shm";
    case TCA_PATH_MPI:
      return "mpi";
    case TCA_PATH_CUDA:
      return "auto";
    case TCA_PATH_CUDA_CE:
      return "ce";
    case TCA_PATH_CUDA_SM:
      return "sm";
    case TCA_PATH_CUDA_RESIDENT:
      return "resident";
    case TCA_PATH_UCX:
      return "ucx";
  }
  return "?";
}

// ---- ranks and collective objects ----

namespace {

// The first of `names` that is set: tca's, torchrun's, then PMIx launchers' (Open MPI's, Slurm's).
int environment_number(std::initializer_list<const char*> names, int otherwise) {
  for (const char* name : names) {
    const char* text = std::getenv(name);
    if (text != nullptr && *text != '\0') return std::atoi(text);
  }
  return otherwise;
}

#ifdef TCA_TESTS_MPI
bool set(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0';
}

bool mpi_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}
#endif

}  // namespace

bool started_by_mpi() {
#ifdef TCA_TESTS_MPI
  const char* bootstrap = std::getenv("TCA_BOOTSTRAP");
  if (bootstrap != nullptr && *bootstrap != '\0' && std::string(bootstrap) != "auto")
    return std::string(bootstrap) == "mpi";
  for (const char* name : {"TCA_ROOT", "TCA_RANK", "MASTER_ADDR"})
    if (set(name)) return false;
  return true;
#else
  return false;
#endif
}

int world_rank() {
#ifdef TCA_TESTS_MPI
  if (mpi_running()) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
  }
#endif
  return environment_number(
      {"TCA_RANK", "RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}, 0);
}

int world_size() {
#ifdef TCA_TESTS_MPI
  if (mpi_running()) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
  }
#endif
  return environment_number({"TCA_SIZE", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"}, 1);
}

namespace {
bool report(const ::testing::AssertionResult& result) {
  if (!result) ADD_FAILURE() << result.message();
  return static_cast<bool>(result);
}
}  // namespace

SharedRegion::SharedRegion(size_t bytes, tcaMemKind kind)
    : bytes_(bytes), kind_(kind), rank_(world_rank()), handles_(world_size()) {
  // Every rank reaches the collective allgather even when its own allocation failed.
  void* ptr = nullptr;
  bool ok = report(succeeded(tcaMalloc(&ptr, bytes, kind), "tcaMalloc"));
  data_ = static_cast<uint8_t*>(ptr);
  tcaHandle own{};
  if (ok) ok = report(succeeded(tcaCreateHandle(&own, ptr, bytes, kind), "tcaCreateHandle"));
  ok = report(succeeded(tcaAllgatherHandles(&own, handles_.data()), "tcaAllgatherHandles")) && ok;
  ok_ = ok;
}

SharedRegion::~SharedRegion() {
  report(succeeded(tcaBarrier(), "tcaBarrier before freeing a region"));
  if (data_ != nullptr) report(succeeded(tcaFree(data_), "tcaFree"));
}

tcaResult SharedRegion::free_now() {
  const tcaResult result = tcaFree(data_);
  data_ = nullptr;
  return result;
}

::testing::AssertionResult SharedRegion::write(size_t offset, const void* bytes, size_t count) {
  std::memcpy(data_ + offset, bytes, count);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult SharedRegion::read(size_t offset, void* bytes, size_t count) const {
  std::memcpy(bytes, data_ + offset, count);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult SharedRegion::poison_range(size_t from, size_t to) {
  std::vector<uint8_t> bytes(to - from);
  poison(bytes.data(), bytes.size());
  return write(from, bytes.data(), bytes.size());
}

::testing::AssertionResult SharedRegion::fill_range(const Pattern& pattern, size_t from,
                                                    size_t to) {
  std::vector<uint8_t> bytes(to - from);
  fill_pattern(bytes.data(), bytes.size(), pattern, from);
  return write(from, bytes.data(), bytes.size());
}

::testing::AssertionResult SharedRegion::holds(const ExpectedImage& expected) const {
  // matches() takes the region's base address: the window sits at its offset of `landed`.
  std::vector<uint8_t> landed(expected.offset() + expected.size());
  const ::testing::AssertionResult copied =
      read(expected.offset(), landed.data() + expected.offset(), expected.size());
  if (!copied) return copied;
  return expected.matches(landed.data());
}

Desc::Desc() { report(succeeded(tcaDescNew(&desc_), "tcaDescNew")); }

Desc::~Desc() {
  if (desc_ != nullptr) report(succeeded(tcaDescFree(desc_), "tcaDescFree"));
}

tcaResult append_copy(tcaDesc desc, const tcaHandle& dst, const tcaHandle& src, const Copy& copy,
                      unsigned flags, int slot) {
  if (copy.blocks) {
    return tcaDescSetMemcpy2D(desc, &dst, copy.dst_offset, copy.dst_pitch, &src, copy.src_offset,
                              copy.src_pitch, copy.width, copy.count, flags, slot);
  }
  return tcaDescSetMemcpy(desc, &dst, copy.dst_offset, &src, copy.src_offset, copy.width, flags,
                          slot);
}

void kick_chain(tcaPath path, const tcaHandle& dst, const tcaHandle& src,
                const std::vector<Copy>& copies,
                const std::vector<std::pair<size_t, int>>& notify_after, int channel) {
  Desc desc;
  ASSERT_NE(desc.get(), nullptr);
  for (size_t i = 0; i < copies.size(); ++i) {
    unsigned flags = 0;
    int slot = 0;
    for (const auto& notify : notify_after) {
      if (notify.first == i) {
        flags = TCA_FLAG_NOTIFY;
        slot = notify.second;
      }
    }
    ASSERT_TCA_OK(append_copy(desc.get(), dst, src, copies[i], flags, slot));
  }
  ASSERT_TCA_OK(tcaDescSetPath(desc.get(), path));
  ASSERT_TCA_OK(tcaDescSet(desc.get(), channel));
  ASSERT_TCA_OK(tcaStartDMADesc(desc.get()));
  ASSERT_TCA_OK(tcaWaitDMAC(channel));
}

tcaResult handle_info(const tcaHandle* handle) {
  int owner = -1;
  size_t bytes = 0;
  tcaMemKind kind = TCA_MEM_CPU;
  return tcaHandleInfo(handle, &owner, &bytes, &kind);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double seconds_since(double start) { return now_seconds() - start; }

::testing::AssertionResult poll_notification(int src_rank, int slot, int* from, double seconds) {
  const double start = now_seconds();
  for (long polls = 1;; ++polls) {
    int arrived = 0;
    const tcaResult result = tcaTestDMARecvDesc(src_rank, slot, &arrived, from);
    if (result != TCA_SUCCESS) return succeeded(result, "tcaTestDMARecvDesc");
    if (arrived) return ::testing::AssertionSuccess();
    if (seconds_since(start) > seconds) {
      return ::testing::AssertionFailure()
             << "tcaTestDMARecvDesc(" << src_rank << ", " << slot << ") reported nothing in "
             << polls << " polls over " << seconds << " s";
    }
    std::this_thread::yield();  // ranks are oversubscribed: let the sender run
  }
}

// ---- the fixture ----

tcaResult TransportTest::initialize() {
  tcaConfig config{};
  config.transport = GetParam().c_str();
  config.timeout_ms = kTestTimeoutMs;
  const tcaResult result = tcaInitWithConfig(&config);
  initialized_ = result == TCA_SUCCESS;
  return result;
}

tcaResult TransportTest::finalize() {
  const tcaResult result = tcaFinalize();
  initialized_ = false;
  return result;
}

void TransportTest::SetUp() {
  ASSERT_TCA_OK(initialize());
  ASSERT_TCA_OK(tcaRank(&rank_));
  ASSERT_TCA_OK(tcaSize(&size_));
  ASSERT_EQ(size_, world_size()) << "tca's job must span every MPI process";
  next_ = (rank_ + 1) % size_;
  prev_ = (rank_ + size_ - 1) % size_;
}

void TransportTest::TearDown() {
  if (initialized_) {
    EXPECT_TCA_OK(finalize());
  }
}

void TransportTest::reinitialize() {
  ASSERT_TCA_OK(finalize());
  ASSERT_TCA_OK(initialize());
}

// ---- ring exchanges ----

const char* method_name(Method method) {
  switch (method) {
    case Method::kDescPush:
      return "descriptor push";
    case Method::kDescPull:
      return "descriptor pull (pseudo-read)";
    case Method::kPut:
      return "tcaPut";
    case Method::kGet:
      return "tcaGet";
  }
  return "?";
}

namespace {

void expect_notification(int src_rank, int slot) {
  int from = -1;
  ASSERT_TCA_OK(tcaWaitDMARecvDesc(src_rank, slot, &from));
  EXPECT_EQ(from, src_rank);
}

}  // namespace

void run_ring_exchange(Method method, tcaPath path, const std::vector<Copy>& copies,
                       SharedRegion& src, SharedRegion& dst, uint64_t seed, size_t check_from,
                       size_t check_to) {
  const int rank = world_rank();
  const int size = world_size();
  const int next = (rank + 1) % size;
  const int prev = (rank + size - 1) % size;
  const int channel = static_cast<int>(seed % TCA_USER_DMA_CHANNELS);
  const int slot = static_cast<int>(seed % TCA_USER_NOTIFY_SLOTS);

  size_t read_from = src.size();
  size_t read_to = 0;
  for (const Copy& copy : copies) {
    read_from = std::min(read_from, copy.src_offset);
    read_to = std::max(read_to, copy.src_end());
  }
  ASSERT_TRUE(dst.poison_range(check_from, check_to));
  ASSERT_TRUE(src.fill_range(Pattern{rank, seed}, read_from, read_to));
  // Nobody writes into a destination before its owner poisoned it, nor reads a source early.
  ASSERT_TCA_OK(tcaBarrier());

  const size_t last = copies.size() - 1;
  switch (method) {
    case Method::kDescPush:
      ASSERT_NO_FATAL_FAILURE(
          kick_chain(path, dst.of(next), src.mine(), copies, {{last, slot}}, channel));
      ASSERT_NO_FATAL_FAILURE(expect_notification(prev, slot));
      break;
    case Method::kDescPull:
      // The destination is local, so the notification is raised at this rank by itself.
      ASSERT_NO_FATAL_FAILURE(
          kick_chain(path, dst.mine(), src.of(prev), copies, {{last, slot}}, channel));
      ASSERT_NO_FATAL_FAILURE(expect_notification(rank, slot));
      break;
    case Method::kPut:
      for (const Copy& copy : copies) {
        ASSERT_FALSE(copy.blocks);
        ASSERT_TCA_OK(
            tcaPut(&dst.of(next), copy.dst_offset, src.data() + copy.src_offset, copy.width));
      }
      ASSERT_TCA_OK(tcaNotify(next, slot));
      ASSERT_NO_FATAL_FAILURE(expect_notification(prev, slot));
      break;
    case Method::kGet:
      for (const Copy& copy : copies) {
        ASSERT_FALSE(copy.blocks);
        ASSERT_TCA_OK(
            tcaGet(dst.data() + copy.dst_offset, &src.of(prev), copy.src_offset, copy.width));
      }
      break;
  }

  ExpectedImage expected(check_from, check_to - check_from);
  for (const Copy& copy : copies) expected.apply(copy, Pattern{prev, seed});
  EXPECT_TRUE(dst.holds(expected))
      << "by " << method_name(method) << " on path " << path_name(path) << " from rank " << prev
      << " (" << kind_name(src.kind()) << ") into rank " << rank << " (" << kind_name(dst.kind())
      << ")";
  // Sources are refilled and destinations re-poisoned only once everyone is done.
  ASSERT_TCA_OK(tcaBarrier());
}

// ---- transfer layouts ----

size_t sweep_src_bytes(const std::vector<SweepCase>& sweep) {
  size_t bytes = 0;
  for (const SweepCase& c : sweep) bytes = std::max(bytes, c.src_offset + c.bytes);
  return bytes;
}

size_t sweep_dst_bytes(const std::vector<SweepCase>& sweep) {
  size_t bytes = 0;
  for (const SweepCase& c : sweep)
    bytes = std::max(bytes, kGuardBytes + c.dst_offset + c.bytes + kGuardBytes);
  return bytes;
}

void run_sweep(Method method, tcaPath path, const std::vector<SweepCase>& sweep, SharedRegion& src,
               SharedRegion& dst) {
  uint64_t seed = 1;
  for (const SweepCase& c : sweep) {
    SCOPED_TRACE(::testing::Message() << c.bytes << " bytes, src offset " << c.src_offset
                                      << ", dst offset " << kGuardBytes + c.dst_offset);
    const size_t dst_offset = kGuardBytes + c.dst_offset;
    ASSERT_NO_FATAL_FAILURE(
        run_ring_exchange(method, path, {Copy::linear(dst_offset, c.src_offset, c.bytes)}, src, dst,
                          seed++, dst_offset - kGuardBytes, dst_offset + c.bytes + kGuardBytes));
  }
}

void run_each_copy(tcaPath path, const std::vector<Copy>& copies, SharedRegion& src,
                   SharedRegion& dst) {
  uint64_t seed = 100;
  for (Method method : {Method::kDescPush, Method::kDescPull}) {
    for (const Copy& copy : copies) {
      SCOPED_TRACE(::testing::Message()
                   << method_name(method) << ": width " << copy.width << " x " << copy.count
                   << ", dst pitch " << copy.dst_pitch << ", src pitch " << copy.src_pitch);
      ASSERT_NO_FATAL_FAILURE(
          run_ring_exchange(method, path, {copy}, src, dst, seed++, 0, dst.size()));
    }
  }
}

Copy Grid::x_face(size_t dst_index, size_t src_index) const {
  return Copy::strided(cell(dst_index, 0, 0), nx * element, cell(src_index, 0, 0), nx * element,
                       element, ny * nz);
}

Copy Grid::y_face(size_t dst_index, size_t src_index) const {
  return Copy::strided(cell(0, dst_index, 0), nx * ny * element, cell(0, src_index, 0),
                       nx * ny * element, nx * element, nz);
}

Copy Grid::z_face(size_t dst_index, size_t src_index) const {
  return Copy::strided(cell(0, 0, dst_index), nx * ny * element, cell(0, 0, src_index),
                       nx * ny * element, nx * ny * element, 1);
}

std::vector<std::pair<const char*, Copy>> Grid::ghost_faces() const {
  return {
      {"x low", x_face(0, nx - 2)},  {"x high", x_face(nx - 1, 1)}, {"y low", y_face(0, ny - 2)},
      {"y high", y_face(ny - 1, 1)}, {"z low", z_face(0, nz - 2)},  {"z high", z_face(nz - 1, 1)},
  };
}

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

}  // namespace tca_test
