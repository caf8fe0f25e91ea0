// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Shared helpers of the tca test programs: result checks that carry tca's error message,
// seeded data patterns with a byte-exact reference model, collective regions, the
// transport-parameterized fixture, and the transfers both the CPU and GPU suites run.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tca/tca.h"

namespace tca_test {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;

// ---- results ----

// The enumerator's name ("TCA_ERROR_OUT_OF_BOUNDS"), so failures name codes, not numbers.
const char* result_name(tcaResult result);

// Success, or a failure that quotes the call and tcaGetLastErrorMessage().
::testing::AssertionResult succeeded(tcaResult result, const char* call);
// Exactly `expected`, with a non-empty tcaGetLastErrorMessage() describing it.
::testing::AssertionResult failed_with(tcaResult expected, tcaResult result, const char* call);

// ---- environment ----

// Sets an environment variable for one scope, then restores what was there.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
    if (const char* previous = std::getenv(name); previous != nullptr) previous_ = previous;
    setenv(name, value.c_str(), /*overwrite=*/1);
  }
  ~ScopedEnvironment() {
    if (previous_) {
      setenv(name_, previous_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> previous_;
};

// ---- data patterns ----

// Destinations are filled with this byte before a transfer. Pattern bytes never take this
// value, so every byte a transfer failed to write is caught.
constexpr uint8_t kPoison = 0xA5;

// Names the content of a source: which rank wrote it and in which round (seed).
struct Pattern {
  int rank = 0;
  uint64_t seed = 0;
};

// The byte `pattern` holds at `offset` of its region; never kPoison.
uint8_t pattern_byte(const Pattern& pattern, uint64_t offset);
// Writes the pattern's bytes [first_offset, first_offset + bytes) to `out`.
void fill_pattern(void* out, size_t bytes, const Pattern& pattern, uint64_t first_offset);
void poison(void* out, size_t bytes);

// One transfer's geometry, as tcaDescSetMemcpy2D describes it. A linear copy is one block.
struct Copy {
  size_t dst_offset = 0;
  size_t dst_pitch = 0;
  size_t src_offset = 0;
  size_t src_pitch = 0;
  size_t width = 0;
  size_t count = 1;
  bool blocks = false;  // issue it through tcaDescSetMemcpy2D even when count is 1

  static Copy linear(size_t dst_offset, size_t src_offset, size_t bytes);
  static Copy strided(size_t dst_offset, size_t dst_pitch, size_t src_offset, size_t src_pitch,
                      size_t width, size_t count);
  // One past the last byte written / read.
  size_t dst_end() const;
  size_t src_end() const;
};

// The bytes a window [offset, offset + bytes) of a destination region must hold: poison,
// except where modelled copies wrote pattern data.
class ExpectedImage {
 public:
  ExpectedImage(size_t offset, size_t bytes);
  void apply(const Copy& copy, const Pattern& source);
  // Compares against region_base[offset .. offset + bytes); names the first wrong byte.
  ::testing::AssertionResult matches(const void* region_base) const;
  size_t offset() const { return offset_; }
  size_t size() const { return bytes_.size(); }

 private:
  size_t offset_;
  std::vector<uint8_t> bytes_;
};

// Byte-range checks for one-off uses.
::testing::AssertionResult is_poison(const void* data, size_t bytes);
::testing::AssertionResult holds_pattern(const void* data, size_t bytes, const Pattern& pattern,
                                         uint64_t first_offset);

// ---- names ----

const char* kind_name(tcaMemKind kind);  // "cpu", "gpu"
const char* path_name(tcaPath path);     // "shm", "mpi", "ce", "sm"; TCA_PATH_CUDA is "auto"

// ---- ranks and collective objects ----

// This process's rank and the job's size, whether or not tca is initialized: MPI's where this
// program initialized MPI, else the launcher's variables (tca-run's TCA_RANK and TCA_SIZE,
// torchrun's RANK and WORLD_SIZE, a PMIx launcher's PMIX_RANK with Open MPI's or Slurm's size),
// else a job of one.
int world_rank();
int world_size();
// Whether an MPI launcher started this process, or it runs alone (then MPI starts as a
// singleton, as before tca could start without it); false under tca-run, torchrun or with
// TCA_BOOTSTRAP naming another bootstrap, and always where the tests are built without MPI.
bool started_by_mpi();

// Collective: every rank allocates `bytes` of one memory kind with tcaMalloc, registers them
// and learns every rank's handle. Destruction waits at a barrier (so no peer still reads or
// writes the region) and frees it. Construction failures are gtest failures; check ok().
// SharedRegion itself holds host memory; KindRegion (cuda/gpu_test_util.h) holds either kind
// and overrides write / read, the host's access, for device memory, so that the checks below
// serve both suites.
class SharedRegion {
 public:
  explicit SharedRegion(size_t bytes) : SharedRegion(bytes, TCA_MEM_CPU) {}
  virtual ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  bool ok() const { return ok_; }
  uint8_t* data() const { return data_; }  // a device pointer for GPU memory
  size_t size() const { return bytes_; }
  tcaMemKind kind() const { return kind_; }
  const tcaHandle& mine() const { return handles_[rank_]; }
  const tcaHandle& of(int rank) const { return handles_[rank]; }
  // Frees now (for tests of freed handles); the destructor then only waits at the barrier.
  tcaResult free_now();

  // Host-side access to bytes [offset, offset + count).
  virtual ::testing::AssertionResult write(size_t offset, const void* bytes, size_t count);
  virtual ::testing::AssertionResult read(size_t offset, void* bytes, size_t count) const;
  ::testing::AssertionResult poison_range(size_t from, size_t to);
  // Bytes [from, to) get the pattern's bytes for those offsets.
  ::testing::AssertionResult fill_range(const Pattern& pattern, size_t from, size_t to);
  // The region holds what `expected` says in its window.
  ::testing::AssertionResult holds(const ExpectedImage& expected) const;

 protected:
  SharedRegion(size_t bytes, tcaMemKind kind);

 private:
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  tcaMemKind kind_ = TCA_MEM_CPU;
  int rank_ = 0;
  bool ok_ = false;
  std::vector<tcaHandle> handles_;
};

// A descriptor freed when it goes out of scope.
class Desc {
 public:
  Desc();
  ~Desc();
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  tcaDesc get() const { return desc_; }

 private:
  tcaDesc desc_ = nullptr;
};

// Appends `copy` with tcaDescSetMemcpy, or tcaDescSetMemcpy2D when copy.blocks.
tcaResult append_copy(tcaDesc desc, const tcaHandle& dst, const tcaHandle& src, const Copy& copy,
                      unsigned flags, int slot);

// Kicks a chain of `copies` from `src` into `dst` on `path` and waits for local completion.
// `notify_after` lists the transfers that carry TCA_FLAG_NOTIFY, with their slots.
void kick_chain(tcaPath path, const tcaHandle& dst, const tcaHandle& src,
                const std::vector<Copy>& copies,
                const std::vector<std::pair<size_t, int>>& notify_after, int channel);

// tcaHandleInfo for its verdict alone (the reported owner, size and kind are dropped).
tcaResult handle_info(const tcaHandle* handle);

// Polls tcaTestDMARecvDesc until a notification arrives; fails when a call fails or when
// `seconds` pass without one.
::testing::AssertionResult poll_notification(int src_rank, int slot, int* from, double seconds);

double seconds_since(double start);
double now_seconds();

// ---- the transport-parameterized fixture ----

// Every case runs once per transport name ("shm", "mpi"): SetUp initializes tca with that
// transport forced, TearDown finalizes it, so each case also exercises an init cycle.
class TransportTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Waits give up well before ctest's limit, so a lost notification fails instead of hanging.
  static constexpr int kTestTimeoutMs = 30000;

  void SetUp() override;
  void TearDown() override;

  // tcaInitWithConfig with this case's transport; tcaFinalize. Both track initialized_.
  tcaResult initialize();
  tcaResult finalize();
  // tcaFinalize then tcaInitWithConfig again (a new job key).
  void reinitialize();

  bool is_shm() const { return GetParam() == "shm"; }
  tcaPath path() const {
    return is_shm() ? TCA_PATH_SHM : GetParam() == "ucx" ? TCA_PATH_UCX : TCA_PATH_MPI;
  }

  int rank_ = 0;
  int size_ = 1;
  int next_ = 0;  // the ring neighbours most cases send to / receive from
  int prev_ = 0;
  bool initialized_ = false;
};

// How a ring case moves data from the previous rank's source into this rank's destination.
enum class Method {
  kDescPush,  // a chain at the sender, destination remote, notification at the receiver
  kDescPull,  // a chain at the receiver, source remote (the pseudo-read), notifying itself
  kPut,       // tcaPut per copy, then tcaNotify
  kGet,       // tcaGet per copy
};
const char* method_name(Method method);

// Runs one ring exchange: every rank moves `copies` from its ring predecessor's `src` region
// (filled with Pattern{prev, seed}) into its own `dst` region by `method` on `path`, then
// checks the window [check_from, check_to) of `dst` byte for byte (copies outside stay
// poison). Regions may be of either memory kind. Collective. Put/get copies must be linear.
void run_ring_exchange(Method method, tcaPath path, const std::vector<Copy>& copies,
                       SharedRegion& src, SharedRegion& dst, uint64_t seed, size_t check_from,
                       size_t check_to);

// ---- transfer layouts of the CPU and GPU suites ----

// One size of a sweep: `bytes` from src_offset of the source into dst_offset past a leading
// guard of the destination; kGuardBytes on both sides of the target are checked untouched.
struct SweepCase {
  size_t bytes;
  size_t src_offset;
  size_t dst_offset;
};
constexpr size_t kGuardBytes = 4096;
// The region sizes a sweep needs.
size_t sweep_src_bytes(const std::vector<SweepCase>& sweep);
size_t sweep_dst_bytes(const std::vector<SweepCase>& sweep);
// Every size of `sweep` as a ring exchange by `method` on `path`. Collective.
void run_sweep(Method method, tcaPath path, const std::vector<SweepCase>& sweep, SharedRegion& src,
               SharedRegion& dst);

// Each of `copies` alone as a ring exchange, by descriptor push and then pull, checking all of
// `dst`. Collective.
void run_each_copy(tcaPath path, const std::vector<Copy>& copies, SharedRegion& src,
                   SharedRegion& dst);

// A face of an nx*ny*nz grid of `element`-byte cells, x fastest: what a halo exchange sends.
struct Grid {
  size_t nx, ny, nz, element;
  size_t bytes() const { return nx * ny * nz * element; }
  size_t cell(size_t i, size_t j, size_t k) const { return ((k * ny + j) * nx + i) * element; }
  // The plane of constant x / y / z, from `src_index` of the sender into `dst_index` here.
  Copy x_face(size_t dst_index, size_t src_index) const;
  Copy y_face(size_t dst_index, size_t src_index) const;
  Copy z_face(size_t dst_index, size_t src_index) const;
  // A halo exchange's six faces, named: each rank's low ghost plane receives the neighbour's
  // last interior plane, and its high ghost plane the neighbour's first interior plane.
  std::vector<std::pair<const char*, Copy>> ghost_faces() const;
};

// `length` transfers laid out back to back with small gaps, every 7th one block-stride, in a
// region of at most `region_bytes`.
std::vector<Copy> chain_layout(size_t length, size_t region_bytes);

}  // namespace tca_test

#define ASSERT_TCA_OK(call) ASSERT_TRUE(::tca_test::succeeded((call), #call))
#define EXPECT_TCA_OK(call) EXPECT_TRUE(::tca_test::succeeded((call), #call))
#define ASSERT_TCA_ERROR(expected, call) \
  ASSERT_TRUE(::tca_test::failed_with((expected), (call), #call))
#define EXPECT_TCA_ERROR(expected, call) \
  EXPECT_TRUE(::tca_test::failed_with((expected), (call), #call))
