// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Single-process tests: error strings, the lifecycle, configuration from the environment, and
// the integrity check of handle bytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tca/tca_coll.h"
#include "test_util.h"

namespace tca_test {
namespace {

constexpr tcaResult kLastResult = TCA_ERROR_INTERNAL;

TEST(ErrorStrings, EveryCodeHasItsOwnNonEmptyString) {
  std::set<std::string> seen;
  for (int code = TCA_SUCCESS; code <= kLastResult; ++code) {
    const char* text = tcaGetErrorString(static_cast<tcaResult>(code));
    ASSERT_NE(text, nullptr) << result_name(static_cast<tcaResult>(code));
    EXPECT_STRNE(text, "") << result_name(static_cast<tcaResult>(code));
    EXPECT_TRUE(seen.insert(text).second)
        << result_name(static_cast<tcaResult>(code)) << " shares its string \"" << text << "\"";
  }
}

TEST(ErrorStrings, UnknownCodeStillGetsAString) {
  for (int code : {-1, kLastResult + 1, 1000}) {
    const char* text = tcaGetErrorString(static_cast<tcaResult>(code));
    ASSERT_NE(text, nullptr) << code;
    EXPECT_STRNE(text, "") << code;
  }
}

TEST(Version, LibraryAndHeadersAgreeBeforeInit) {
  int major = -1, minor = -1, patch = -1;
  ASSERT_EQ(TCA_SUCCESS, tcaGetVersion(&major, &minor, &patch));
  EXPECT_EQ(TCA_VERSION_MAJOR, major);
  EXPECT_EQ(TCA_VERSION_MINOR, minor);
  EXPECT_EQ(TCA_VERSION_PATCH, patch);
  EXPECT_EQ(TCA_VERSION_CODE, 10000 * major + 100 * minor + patch);
  const std::string text =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  EXPECT_EQ(text, TCA_VERSION_STRING);
  EXPECT_EQ(TCA_SUCCESS, tcaGetVersion(nullptr, &minor, nullptr));  // any pointer may be NULL
}

// The settings table through the C API, before tcaInit: values, origins, refusals.
TEST(Settings, EverySettingWithItsValueAndOrigin) {
  int count = 0;
  ASSERT_EQ(TCA_SUCCESS, tcaGetSettingCount(&count));
  ASSERT_GT(count, 5);
  int timeout = -1;
  std::set<std::string> names;
  for (int i = 0; i < count; ++i) {
    tcaSettingInfo info{};
    ASSERT_EQ(TCA_SUCCESS, tcaGetSetting(i, &info));
    ASSERT_NE(nullptr, info.name);
    ASSERT_NE(nullptr, info.value);
    ASSERT_NE(nullptr, info.accepted);
    ASSERT_NE(nullptr, info.meaning);
    EXPECT_TRUE(names.insert(info.name).second) << info.name << " twice";
    if (std::string(info.name) == "TCA_TIMEOUT_MS") timeout = i;
  }
  ASSERT_GE(timeout, 0);
  tcaSettingInfo info{};
  unsetenv("TCA_TIMEOUT_MS");
  ASSERT_EQ(TCA_SUCCESS, tcaGetSetting(timeout, &info));
  EXPECT_EQ(0, info.from_environment);
  EXPECT_EQ(1, info.valid);
  EXPECT_STREQ(info.default_value, info.value);
  setenv("TCA_TIMEOUT_MS", "1234", 1);
  ASSERT_EQ(TCA_SUCCESS, tcaGetSetting(timeout, &info));
  EXPECT_EQ(1, info.from_environment);
  EXPECT_EQ(1, info.valid);
  EXPECT_STREQ("1234", info.value);
  setenv("TCA_TIMEOUT_MS", "soon", 1);
  ASSERT_EQ(TCA_SUCCESS, tcaGetSetting(timeout, &info));
  EXPECT_EQ(1, info.from_environment);
  EXPECT_EQ(0, info.valid);
  EXPECT_STREQ("soon", info.value);
  unsetenv("TCA_TIMEOUT_MS");
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT, tcaGetSetting(count, &info));
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT, tcaGetSetting(-1, &info));
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT, tcaGetSetting(0, nullptr));
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT, tcaGetSettingCount(nullptr));
}

// The fixed rules of the choices by size, before tcaInit: every one complete, and the
// algorithm rules the ones tcaCollChooseAlgorithm follows.
TEST(Choices, FixedRulesAreListed) {
  int count = 0;
  ASSERT_EQ(TCA_SUCCESS, tcaGetChoiceRuleCount(&count));
  ASSERT_GT(count, 10);
  std::set<std::string> choices;
  std::string gpu_allreduce_2;  // the picks of "gpu allreduce, ranks <= 2", in order
  for (int i = 0; i < count; ++i) {
    tcaChoiceRule rule{};
    ASSERT_EQ(TCA_SUCCESS, tcaGetChoiceRule(i, &rule));
    ASSERT_NE(nullptr, rule.choice);
    ASSERT_NE(nullptr, rule.when);
    ASSERT_NE(nullptr, rule.pick);
    choices.insert(rule.choice);
    if (std::string(rule.when) == "gpu allreduce, ranks <= 2") {
      tcaCollAlgorithm algorithm = TCA_COLL_AUTO;
      const size_t bytes = rule.max_bytes == SIZE_MAX ? size_t{1} << 30 : rule.max_bytes;
      ASSERT_EQ(TCA_SUCCESS,
                tcaCollChooseAlgorithm(TCA_COLL_ALLREDUCE, TCA_MEM_GPU, bytes, 2, &algorithm));
      EXPECT_STREQ(tcaCollAlgorithmName(algorithm), rule.pick);
      gpu_allreduce_2 += std::string(rule.pick) + " ";
    }
  }
  EXPECT_EQ("recursive_doubling ring ", gpu_allreduce_2);
  for (const char* choice : {"transport", "collective algorithm", "gpu collective protocol",
                             "gpu collective channels", "cuda engine"})
    EXPECT_EQ(1u, choices.count(choice)) << choice;
  tcaChoiceRule rule{};
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT, tcaGetChoiceRule(count, &rule));
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT, tcaGetChoiceRule(-1, &rule));
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT, tcaGetChoiceRule(0, nullptr));
  EXPECT_EQ(TCA_ERROR_INVALID_ARGUMENT, tcaGetChoiceRuleCount(nullptr));
}

TEST(Lifecycle, CallsBeforeInitAreRejected) {
  int value = 0;
  void* pointer = nullptr;
  tcaDesc desc = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaRank(&value));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaSize(&value));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaMalloc(&pointer, 64, TCA_MEM_CPU));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaDescNew(&desc));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaNotify(0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaFinalize());
}

// A transport other than shm that every build has where it runs alone: mpi where the tests
// have MPI (a singleton job), else shm again.
#ifdef TCA_TESTS_MPI
constexpr const char* kOther = "mpi";
#else
constexpr const char* kOther = "shm";
#endif

TEST(Lifecycle, RepeatedInitFinalizeCycles) {
  for (const char* transport : {"auto", "shm", kOther, "auto"}) {
    SCOPED_TRACE(transport);
    tcaConfig config{};
    config.transport = transport;
    ASSERT_TCA_OK(tcaInitWithConfig(&config));
    int rank = -1;
    int size = 0;
    EXPECT_TCA_OK(tcaRank(&rank));
    EXPECT_TCA_OK(tcaSize(&size));
    EXPECT_EQ(rank, world_rank());
    EXPECT_EQ(size, world_size());
    EXPECT_TCA_ERROR(TCA_ERROR_ALREADY_INITIALIZED, tcaInit());
    void* block = nullptr;
    EXPECT_TCA_OK(tcaMalloc(&block, 1000, TCA_MEM_CPU));
    EXPECT_TCA_OK(tcaFree(block));
    ASSERT_TCA_OK(tcaFinalize());
  }
}

TEST(Lifecycle, UnknownTransportNameFailsInitCleanly) {
  tcaConfig config{};
  config.transport = "carrier-pigeon";
  const tcaResult result = tcaInitWithConfig(&config);
  EXPECT_NE(result, TCA_SUCCESS);
  EXPECT_STRNE(tcaGetLastErrorMessage(), "");
  if (result == TCA_SUCCESS) {
    ASSERT_TCA_OK(tcaFinalize());
  }
  int rank = 0;
  EXPECT_TCA_ERROR(TCA_ERROR_NOT_INITIALIZED, tcaRank(&rank)) << "a failed init left tca half up";
  ASSERT_TCA_OK(tcaInit());
  ASSERT_TCA_OK(tcaFinalize());
}

TEST(Config, EnvironmentChoosesTransportAndTimeout) {
  ScopedEnvironment transport("TCA_TRANSPORT", kOther);
  ScopedEnvironment timeout("TCA_TIMEOUT_MS", "150");
  ASSERT_TCA_OK(tcaInit());
  const char* name = nullptr;
  EXPECT_TCA_OK(tcaPeerTransport(0, &name));
  EXPECT_STREQ(name, kOther);
  const double start = now_seconds();
  EXPECT_TCA_ERROR(TCA_ERROR_TIMEOUT, tcaWaitDMARecvDesc(0, 0, nullptr));
  const double waited = seconds_since(start);
  EXPECT_GE(waited, 0.13);
  EXPECT_LT(waited, 10.0) << "TCA_TIMEOUT_MS=150 was not honoured";
  ASSERT_TCA_OK(tcaFinalize());
}

TEST(Config, ExplicitConfigOverridesTheEnvironment) {
  ScopedEnvironment transport("TCA_TRANSPORT", kOther);
  tcaConfig config{};
  config.transport = "shm";
  ASSERT_TCA_OK(tcaInitWithConfig(&config));
  const char* name = nullptr;
  EXPECT_TCA_OK(tcaPeerTransport(0, &name));
  EXPECT_STREQ(name, "shm");
  ASSERT_TCA_OK(tcaFinalize());
}

// One process with tca up and one registered, poisoned region.
class SingleProcessHandles : public ::testing::Test {
 protected:
  static constexpr size_t kBytes = 4096;

  void SetUp() override {
    ASSERT_TCA_OK(tcaInit());
    void* block = nullptr;
    ASSERT_TCA_OK(tcaMalloc(&block, kBytes, TCA_MEM_CPU));
    region_ = static_cast<uint8_t*>(block);
    poison(region_, kBytes);
    ASSERT_TCA_OK(tcaCreateHandle(&handle_, region_, kBytes, TCA_MEM_CPU));
  }

  void TearDown() override {
    if (region_ != nullptr) {
      EXPECT_TCA_OK(tcaFree(region_));
    }
    EXPECT_TCA_OK(tcaFinalize());
  }

  uint8_t* region_ = nullptr;
  tcaHandle handle_{};
};

TEST_F(SingleProcessHandles, EveryCorruptedByteMakesTheHandleInvalid) {
  const uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (size_t byte = 0; byte < TCA_HANDLE_BYTES; ++byte) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
      tcaHandle corrupted = handle_;
      corrupted.bytes[byte] ^= flip;
      EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE, handle_info(&corrupted))
          << "byte " << byte << " xor " << int{flip};
    }
    tcaHandle corrupted = handle_;
    corrupted.bytes[byte] ^= 0x10;
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE, tcaPut(&corrupted, 0, data, sizeof data))
        << "byte " << byte;
  }
  EXPECT_TRUE(is_poison(region_, kBytes)) << "a put through a corrupted handle wrote";
  EXPECT_TCA_OK(handle_info(&handle_)) << "the original must still be good";
}

TEST_F(SingleProcessHandles, ZeroAndRandomBytesAreNotHandles) {
  tcaHandle zero{};
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE, handle_info(&zero));
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100; ++i) {
    tcaHandle random;
    for (unsigned char& byte : random.bytes) byte = static_cast<unsigned char>(rng());
    EXPECT_TCA_ERROR(TCA_ERROR_INVALID_HANDLE, handle_info(&random)) << "random handle " << i;
  }
}

TEST_F(SingleProcessHandles, HandleSurvivesAFileRoundTrip) {
  // Handles are plain bytes: they may be saved and read back, here through a temporary file.
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(handle_.bytes, 1, TCA_HANDLE_BYTES, file), size_t{TCA_HANDLE_BYTES});
  std::rewind(file);
  tcaHandle loaded{};
  ASSERT_EQ(std::fread(loaded.bytes, 1, TCA_HANDLE_BYTES, file), size_t{TCA_HANDLE_BYTES});
  std::fclose(file);
  int owner = -1;
  size_t bytes = 0;
  tcaMemKind kind = TCA_MEM_GPU;
  ASSERT_TCA_OK(tcaHandleInfo(&loaded, &owner, &bytes, &kind));
  EXPECT_EQ(owner, 0);
  EXPECT_EQ(bytes, kBytes);
  EXPECT_EQ(kind, TCA_MEM_CPU);
  const uint8_t data[5] = {9, 8, 7, 6, 5};
  ASSERT_TCA_OK(tcaPut(&loaded, 3, data, sizeof data));
  EXPECT_EQ(std::memcmp(region_ + 3, data, sizeof data), 0);
}

TEST_F(SingleProcessHandles, FreeDeregistersEveryRegionInsideTheBlock) {
  tcaHandle inner{};
  ASSERT_TCA_OK(tcaCreateHandle(&inner, region_ + 100, 200, TCA_MEM_CPU));
  ASSERT_TCA_OK(tcaFree(region_));
  region_ = nullptr;
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, handle_info(&handle_));
  EXPECT_TCA_ERROR(TCA_ERROR_FREED_HANDLE, handle_info(&inner));
}

// The security boundary (docs/ARCHITECTURE.md): a process of another user reaches none of a
// job's memory, neither by opening its memfds nor by cross-memory attach; a process of the same
// user can, as with any shared memory.
int probe_as(uid_t uid, pid_t owner, const std::string& memfd_link, void* address) {
  const pid_t child = fork();
  if (child == 0) {
    if (uid != geteuid() && (setgid(uid) != 0 || setuid(uid) != 0)) _exit(3);
    const int fd = open(memfd_link.c_str(), O_RDWR);
    uint64_t value = 0x1234;
    iovec local{&value, sizeof(value)};
    iovec remote{address, sizeof(value)};
    const ssize_t read = process_vm_readv(owner, &local, 1, &remote, 1, 0);
    // 0: both refused; 1: both allowed; 2: mixed.
    _exit(fd < 0 && read < 0 ? 0 : fd >= 0 && read == sizeof(value) ? 1 : 2);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(SingleProcessHandles, MemfdsAreOwnerOnlyAndOtherUsersReachNothing) {
  std::string link;
  for (int fd = 0; fd < 4096 && link.empty(); ++fd) {
    char target[256] = {};
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (readlink(path.c_str(), target, sizeof(target) - 1) <= 0) continue;
    if (std::strncmp(target, "/memfd:tca.", 11) != 0) continue;
    struct stat status {};
    ASSERT_EQ(0, fstat(fd, &status));
    EXPECT_EQ(status.st_mode & 0777, 0600u) << target;
    link = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(fd);
  }
  ASSERT_FALSE(link.empty()) << "no tca memfd found";
  if (geteuid() != 0) GTEST_SKIP() << "becoming another user needs root";
  EXPECT_EQ(probe_as(65534, getpid(), link, region_), 0) << "user nobody reached the job's memory";
  EXPECT_EQ(probe_as(geteuid(), getpid(), link, region_), 1) << "the same user should";
}

// tcaInit after a tcaFinalize that ended MPI (tca had started it) is an error, not an abort:
// tests/reinit_after_finalize.cc, a program of its own since MPI ends with it.

}  // namespace
}  // namespace tca_test
