// Attacks from inside the job, on every transport: handles forged with a valid checksum, a
// peer streaming into a region while its owner withdraws it, and inputs an outside audit found
// to hang or to answer differently per transport. The forger here knows the handle's layout
// and checksum, as anyone reading tca's source does; only the owner's record must decide.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core/handle.h"  // the layout an attacker reads from the source
#include "tca/tca_coll.h"
#include "test_util.h"

namespace tca_test {
namespace {

using tca::WireHandle;

// The checksum, written again from its description (FNV-1a over every byte before it, then a
// finalizing mix): what a forger computes.
void reseal(WireHandle& wire) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&wire);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < offsetof(WireHandle, checksum); ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdull;
  hash ^= hash >> 33;
  wire.checksum = hash;
}

WireHandle wire_of(const tcaHandle& handle) {
  WireHandle wire;
  std::memcpy(&wire, handle.bytes, sizeof(wire));
  return wire;
}

tcaHandle handle_of(const WireHandle& wire) {
  tcaHandle handle;
  std::memcpy(handle.bytes, &wire, sizeof(wire));
  return handle;
}

// A region that is not a whole tcaMalloc block, and one in the caller's own memory: the two
// ways shm reaches a peer (memfd mapping, cross-memory attach).
class TwoRegions {
 public:
  static constexpr size_t kBytes = 4096;
  TwoRegions() : user_(kBytes), mine_(2) {
    EXPECT_TCA_OK(tcaMalloc(&block_, 2 * kBytes, TCA_MEM_CPU));
    EXPECT_TCA_OK(tcaCreateHandle(&mine_[0], static_cast<uint8_t*>(block_) + 1024, kBytes,
                                  TCA_MEM_CPU));
    EXPECT_TCA_OK(tcaCreateHandle(&mine_[1], user_.data(), kBytes, TCA_MEM_CPU));
    int size = 0;
    EXPECT_TCA_OK(tcaSize(&size));
    all_.assign(2 * size, tcaHandle{});
    std::vector<tcaHandle> round(size);
    for (int which = 0; which < 2; ++which) {
      EXPECT_TCA_OK(tcaAllgatherHandles(&mine_[which], round.data()));
      for (int rank = 0; rank < size; ++rank) all_[2 * rank + which] = round[rank];
    }
  }
  ~TwoRegions() {
    EXPECT_TCA_OK(tcaBarrier());
    EXPECT_TCA_OK(tcaDestroyHandle(&mine_[1]));
    EXPECT_TCA_OK(tcaFree(block_));
  }
  // Region `which` (0: inside a tcaMalloc block, 1: user memory) of `rank`.
  const tcaHandle& of(int rank, int which) const { return all_[2 * rank + which]; }
  const std::vector<tcaHandle>& all() const { return all_; }

 private:
  void* block_ = nullptr;
  std::vector<uint8_t> user_;
  std::vector<tcaHandle> mine_;
  std::vector<tcaHandle> all_;
};

// Every entry point that takes a handle refuses `forged` with `expected`.
void expect_refused(tcaResult expected, const tcaHandle& forged, const tcaHandle& own) {
  EXPECT_TCA_ERROR(expected, handle_info(&forged));
  uint8_t bytes[16] = {};
  EXPECT_TCA_ERROR(expected, tcaPut(&forged, 0, bytes, sizeof(bytes)));
  EXPECT_TCA_ERROR(expected, tcaGet(bytes, &forged, 0, sizeof(bytes)));
  void* window = nullptr;
  EXPECT_TCA_ERROR(expected, tcaPIOPointer(&window, &forged, 0, 8));
  Desc desc;
  EXPECT_TCA_ERROR(expected, tcaDescSetMemcpy(desc.get(), &forged, 0, &own, 0, 8, 0, 0));
  EXPECT_TCA_ERROR(expected, tcaDescSetMemcpy(desc.get(), &own, 0, &forged, 0, 8, 0, 0));
}

// The genuine handle still reaches its region: bytes put there come back.
void expect_genuine_works(const tcaHandle& genuine) {
  uint8_t out[64];
  uint8_t in[64] = {};
  fill_pattern(out, sizeof(out), Pattern{world_rank(), 77}, 0);
  ASSERT_TCA_OK(tcaPut(&genuine, 100, out, sizeof(out)));
  ASSERT_TCA_OK(tcaGet(in, &genuine, 100, sizeof(in)));
  EXPECT_EQ(0, std::memcmp(in, out, sizeof(in)));
}

TEST_P(TransportTest, HandlesForgedWithAValidChecksumAreRefused) {
  TwoRegions regions;
  const tcaHandle& own = regions.of(rank_, 0);
  for (int which = 0; which < 2; ++which) {
    const tcaHandle& genuine = regions.of(next_, which);
    const WireHandle g = wire_of(genuine);
    const WireHandle other = wire_of(regions.of(next_, 1 - which));
    struct Forgery {
      const char* what;
      tcaResult expected;
      void (*change)(WireHandle&, const WireHandle&);
    };
    const Forgery forgeries[] = {
        {"enlarged size", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.bytes *= 2; }},
        {"shrunk size", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.bytes -= 1; }},
        {"moved base", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.address += 256; }},
        {"base moved to the other region", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle& o) { w.address = o.address; }},
        {"another region's id", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle& o) { w.region_id = o.region_id; }},
        {"the control block's memfd", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) {
           w.mappable = 1;
           w.memfd_serial = 0;
           w.memfd_offset = 0;
         }},
        {"the next memfd serial", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) {
           w.mappable = 1;
           w.memfd_serial += 10;
         }},
        {"flipped mappable flag", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.mappable ^= 1; }},
        {"device memory kind", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.kind = TCA_MEM_GPU; }},
        {"device export bytes", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.device_ipc[3] ^= 0x5a; }},
        {"owner process", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.owner_pid += 1; }},
        {"an id never issued", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.region_id += uint64_t{1} << 40; }},
        {"reserved bytes", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.reserved1[5] = 1; }},
        {"a transport record the owner never wrote", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) {
           // Well framed (transport 0, 4 bytes, padded to 8) after the genuine records.
           const uint8_t record[8] = {0, 0, 4, 0, 0xde, 0xad, 0xbe, 0xef};
           std::memcpy(w.records + w.records_bytes, record, sizeof(record));
           w.records_bytes = static_cast<uint16_t>(w.records_bytes + sizeof(record));
         }},
        {"bytes after the transport records", TCA_ERROR_INVALID_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.records[sizeof(w.records) - 1] = 1; }},
        {"another job's key", TCA_ERROR_FOREIGN_HANDLE,
         [](WireHandle& w, const WireHandle&) { w.job_key ^= 0x1234; }},
    };
    for (const Forgery& forgery : forgeries) {
      SCOPED_TRACE(::testing::Message() << (which == 0 ? "tcaMalloc" : "user") << " region, "
                                        << forgery.what);
      WireHandle forged = g;
      forgery.change(forged, other);
      reseal(forged);
      ASSERT_NE(0, std::memcmp(&forged, &g, sizeof(g)));
      expect_refused(forgery.expected, handle_of(forged), own);
    }
    // Nothing a forgery did stops the genuine handle (nor another region's).
    ASSERT_NO_FATAL_FAILURE(expect_genuine_works(genuine));
    ASSERT_NO_FATAL_FAILURE(expect_genuine_works(regions.of(next_, 1 - which)));
  }
}

TEST_P(TransportTest, RandomMutationsWithAValidChecksumAcceptNothingNew) {
  TwoRegions regions;
  const std::vector<tcaHandle>& genuine = regions.all();
  const int mutations = 100000 / size_;  // 10^5 in all over the job
  std::mt19937_64 rng(0x5eed + rank_);
  int accepted_genuine = 0;
  int accepted_other = 0;
  for (int i = 0; i < mutations; ++i) {
    const tcaHandle& base = genuine[rng() % genuine.size()];
    WireHandle wire = wire_of(base);
    auto* bytes = reinterpret_cast<unsigned char*>(&wire);
    const int flips = 1 + static_cast<int>(rng() % 3);
    // Most flips hit the fixed part (and the start of the records), the rest anywhere.
    const size_t fixed = offsetof(WireHandle, records) + 16;
    for (int f = 0; f < flips; ++f) {
      const size_t span = rng() % 4 != 0 ? fixed : offsetof(WireHandle, checksum);
      bytes[rng() % span] ^= static_cast<unsigned char>(1 + rng() % 255);
    }
    reseal(wire);
    const tcaHandle mutated = handle_of(wire);
    int owner = -1;
    size_t size = 0;
    tcaMemKind kind = TCA_MEM_CPU;
    if (tcaHandleInfo(&mutated, &owner, &size, &kind) != TCA_SUCCESS) continue;
    bool is_genuine = false;
    for (const tcaHandle& handle : genuine)
      is_genuine = is_genuine || std::memcmp(&handle, &mutated, sizeof(handle)) == 0;
    (is_genuine ? accepted_genuine : accepted_other) += 1;
  }
  EXPECT_EQ(accepted_other, 0) << "of " << mutations << " mutated handles";
  // Flips that cancel out give the genuine handle back; those are the only acceptances.
  EXPECT_LE(accepted_genuine, mutations / 100);
  for (int which = 0; which < 2; ++which)
    ASSERT_NO_FATAL_FAILURE(expect_genuine_works(regions.of(next_, which)));
  ASSERT_TCA_OK(tcaBarrier());
}

// Rank 0 withdraws a region (tcaDestroyHandle) while every other rank streams into it, then
// poisons the memory at once: any byte that lands after the return shows.
TEST_P(TransportTest, NoByteLandsAfterTheOwnerWithdrawsTheRegion) {
  if (size_ < 2) GTEST_SKIP() << "needs a writer and an owner";
  constexpr size_t kBytes = 256 * kKiB;
  constexpr int kRounds = 100;
  void* block = nullptr;
  ASSERT_TCA_OK(tcaMalloc(&block, kBytes, TCA_MEM_CPU));
  std::vector<uint8_t> user(kBytes);
  SharedRegion source(kBytes);
  ASSERT_TRUE(source.ok());
  fill_pattern(source.data(), kBytes, Pattern{rank_, 5}, 0);
  std::mt19937 rng(42);
  uint64_t late_bytes = 0;
  int raced = 0;  // rounds in which a writer's kick was refused: the withdrawal hit a stream
  for (int round = 0; round < kRounds; ++round) {
    uint8_t* target = round % 2 == 0 ? static_cast<uint8_t*>(block) : user.data();
    tcaHandle mine{};
    ASSERT_TCA_OK(tcaCreateHandle(&mine, target, kBytes, TCA_MEM_CPU));
    std::vector<tcaHandle> all(size_);
    ASSERT_TCA_OK(tcaAllgatherHandles(&mine, all.data()));
    if (rank_ == 0) {
      const auto delay = std::chrono::microseconds(rng() % 3000);
      ASSERT_TCA_OK(tcaBarrier());
      std::this_thread::sleep_for(delay);
      ASSERT_TCA_OK(tcaDestroyHandle(&mine));
      poison(target, kBytes);
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      for (size_t i = 0; i < kBytes; ++i) late_bytes += target[i] != kPoison ? 1 : 0;
    } else {
      Desc desc;
      ASSERT_TCA_OK(tcaDescSetMemcpy(desc.get(), &all[0], 0, &source.mine(), 0, kBytes, 0, 0));
      ASSERT_TCA_OK(tcaDescSetPath(desc.get(), path()));
      ASSERT_TCA_OK(tcaDescSet(desc.get(), 0));
      ASSERT_TCA_OK(tcaBarrier());
      const double start = now_seconds();
      for (;;) {
        const tcaResult result = tcaStartDMADesc(desc.get());
        if (result == TCA_ERROR_FREED_HANDLE) break;
        ASSERT_TCA_OK(result);
        ASSERT_TCA_OK(tcaWaitDMAC(0));
        ASSERT_LT(seconds_since(start), 20.0) << "the owner's withdrawal never showed";
      }
      ++raced;
      ASSERT_TCA_OK(tcaDestroyHandle(&mine));
    }
    ASSERT_TCA_OK(tcaBarrier());
  }
  EXPECT_EQ(late_bytes, 0u) << "bytes landed after tcaDestroyHandle returned";
  if (rank_ != 0) {
    EXPECT_EQ(raced, kRounds);
  }
  ASSERT_TCA_OK(tcaFree(block));
}

TEST_P(TransportTest, RangesThatAreNotReadWriteMemoryAreRefused) {
  const long page = sysconf(_SC_PAGESIZE);
  auto* area = static_cast<uint8_t*>(
      mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(area, MAP_FAILED);
  ASSERT_EQ(0, mprotect(area + page, page, PROT_NONE));
  ASSERT_EQ(0, mprotect(area + 2 * page, page, PROT_READ));
  ASSERT_EQ(0, munmap(area + 3 * page, page));
  tcaHandle handle{};
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCreateHandle(&handle, area + page, 64,
                                                               TCA_MEM_CPU));  // no access
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCreateHandle(&handle, area + 2 * page, 64,
                                                               TCA_MEM_CPU));  // read-only
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaCreateHandle(&handle, area + 3 * page, 64,
                                                               TCA_MEM_CPU));  // unmapped
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCreateHandle(&handle, area, page + 1, TCA_MEM_CPU));  // runs into it
  ASSERT_TCA_OK(tcaCreateHandle(&handle, area, page, TCA_MEM_CPU));  // the good page is fine
  ASSERT_TCA_OK(tcaDestroyHandle(&handle));
  munmap(area, 3 * page);
}

TEST_P(TransportTest, EmptyBlockStrideEntriesAreRefused) {
  SharedRegion src(4096), dst(4096);
  ASSERT_TRUE(src.ok() && dst.ok());
  Desc desc;
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaDescSetMemcpy2D(desc.get(), &dst.of(next_), 0, 16, &src.mine(), 0, 16, 0,
                                      SIZE_MAX / 32, 0, 0));  // zero width, huge count
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaDescSetMemcpy2D(desc.get(), &dst.of(next_), 0, 16, &src.mine(), 0, 16, 8,
                                      0, 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaDescSet(desc.get(), 0));  // nothing was appended
  ASSERT_TCA_OK(tcaBarrier());
}

// The same input gets the same answer on every transport.
TEST_P(TransportTest, SmallCasesAnswerAlikeOnEveryTransport) {
  SharedRegion region(4096);
  ASSERT_TRUE(region.ok());
  EXPECT_TCA_OK(tcaPut(&region.of(next_), 0, nullptr, 0));
  EXPECT_TCA_OK(tcaGet(nullptr, &region.of(next_), 0, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_OUT_OF_BOUNDS, tcaPut(&region.of(next_), 4097, nullptr, 0));
  // A PIO pointer into the caller's own region is its own memory, whichever transport.
  void* window = nullptr;
  ASSERT_TCA_OK(tcaPIOPointer(&window, &region.mine(), 8, 8));
  EXPECT_EQ(window, region.data() + 8);
  // A freed descriptor stays invalid, however many are made after it.
  tcaDesc stale = nullptr;
  ASSERT_TCA_OK(tcaDescNew(&stale));
  ASSERT_TCA_OK(tcaDescFree(stale));
  std::vector<tcaDesc> fresh(64);
  for (tcaDesc& desc : fresh) {
    ASSERT_TCA_OK(tcaDescNew(&desc));
    EXPECT_NE(desc, stale);
  }
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaDescSet(stale, 0));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_DESC, tcaDescFree(stale));
  for (tcaDesc desc : fresh) ASSERT_TCA_OK(tcaDescFree(desc));
  tcaCollAlgorithm algorithm = TCA_COLL_AUTO;
  EXPECT_TCA_OK(tcaCollChooseAlgorithm(TCA_COLL_ALLREDUCE, TCA_MEM_CPU, 8, INT_MAX, &algorithm));
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT,
                   tcaCollChooseAlgorithm(static_cast<tcaCollKind>(7), TCA_MEM_CPU, 8, 4,
                                          &algorithm));
  ASSERT_TCA_OK(tcaBarrier());
}

// Many separate registrations (more than Open MPI's osc/rdma attaches to one window) all stay
// reachable.
TEST_P(TransportTest, HundredsOfSeparateRegistrationsStayReachable) {
  constexpr int kRegions = 200;
  const long page = sysconf(_SC_PAGESIZE);
  // Every other page, so that no two registrations share or touch a page.
  std::vector<uint8_t> memory(static_cast<size_t>(2 * kRegions + 1) * page);
  auto* first = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(memory.data()) + page - 1) / page * page);
  std::vector<tcaHandle> mine(kRegions);
  for (int i = 0; i < kRegions; ++i) {
    ASSERT_TCA_OK(tcaCreateHandle(&mine[i], first + 2 * i * page, 64, TCA_MEM_CPU))
        << "registration " << i;
  }
  std::vector<tcaHandle> theirs(size_);
  for (int i = 0; i < kRegions; i += 37) {
    ASSERT_TCA_OK(tcaAllgatherHandles(&mine[i], theirs.data()));
    const uint64_t value = 1000 * rank_ + i;
    ASSERT_TCA_OK(tcaPut(&theirs[next_], 8, &value, sizeof(value)));
    ASSERT_TCA_OK(tcaBarrier());
    uint64_t landed = 0;
    std::memcpy(&landed, first + 2 * i * page + 8, sizeof(landed));
    EXPECT_EQ(landed, static_cast<uint64_t>(1000 * prev_ + i)) << "region " << i;
  }
  ASSERT_TCA_OK(tcaBarrier());
  for (const tcaHandle& handle : mine) ASSERT_TCA_OK(tcaDestroyHandle(&handle));
}

}  // namespace
}  // namespace tca_test
