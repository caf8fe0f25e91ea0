// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Attacks from inside the job, on every transport: handles forged with a valid checksum, a
// peer streaming into a region while its owner withdraws it, and inputs an outside audit found
// to hang or to answer differently per transport. The forger here knows the handle's layout
// and checksum, as anyone reading tca's source does, and can give any bytes any checksum; only
// the owner's record must decide.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/handle.h"  // the layout an attacker reads from the source
#include "tca/tca_coll.h"
#include "test_util.h"

namespace tca_test {
namespace {

using tca::WireHandle;

// The checksum, written again from its description (CRC-64 with the ECMA-182 polynomial,
// reflected, all-ones start and final xor, over every byte before it): what a forger computes.
uint64_t crc_of(const WireHandle& wire) {
  static const std::vector<uint64_t> table = [] {
    std::vector<uint64_t> made(256);
    for (uint64_t byte = 0; byte < 256; ++byte) {
      uint64_t crc = byte;
      for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0xc96c5795d7870f42ull : 0);
      made[byte] = crc;
    }
    return made;
  }();
  const auto* bytes = reinterpret_cast<const unsigned char*>(&wire);
  uint64_t crc = ~uint64_t{0};
  for (size_t i = 0; i < offsetof(WireHandle, checksum); ++i)
    crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void reseal(WireHandle& wire) { wire.checksum = crc_of(wire); }

// For the 8-byte window at offset `at`: which window bits flip CRC bit b alone (entry b). A CRC
// is affine over GF(2), and the 64 bits of a window map onto the 64 bits of the CRC one to one,
// so Gaussian elimination on the 64 columns (the change each window bit makes) inverts it.
// The columns depend only on where the window sits, so each offset is solved once.
const std::vector<uint64_t>& window_inverse(size_t at) {
  static std::map<size_t, std::vector<uint64_t>> solved;
  auto found = solved.find(at);
  if (found != solved.end()) return found->second;
  WireHandle zero{};
  auto* bytes = reinterpret_cast<unsigned char*>(&zero);
  const uint64_t base = crc_of(zero);
  std::vector<uint64_t> change(64), made_of(64);
  for (int k = 0; k < 64; ++k) {
    bytes[at + k / 8] ^= static_cast<unsigned char>(1u << (k % 8));
    change[k] = crc_of(zero) ^ base;
    bytes[at + k / 8] ^= static_cast<unsigned char>(1u << (k % 8));
    made_of[k] = uint64_t{1} << k;
  }
  for (int bit = 0; bit < 64; ++bit) {  // row `bit` ends with the single CRC bit `bit` set
    int pivot = bit;
    while (pivot < 64 && ((change[pivot] >> bit) & 1) == 0) ++pivot;
    if (pivot == 64) return solved[at];  // empty: the window cannot steer (never for a CRC-64)
    std::swap(change[bit], change[pivot]);
    std::swap(made_of[bit], made_of[pivot]);
    for (int row = 0; row < 64; ++row)
      if (row != bit && ((change[row] >> bit) & 1) != 0) {
        change[row] ^= change[bit];
        made_of[row] ^= made_of[bit];
      }
  }
  return solved[at] = made_of;
}

// Rewrites the 8 bytes at offset `at` of `wire` so that its CRC comes out as `target`, and
// stores `target` as its checksum: how a forger gives any forged bytes the owner's checksum.
void steer(WireHandle& wire, size_t at, uint64_t target) {
  auto* bytes = reinterpret_cast<unsigned char*>(&wire);
  ASSERT_LE(at + 8, offsetof(WireHandle, checksum));
  const std::vector<uint64_t>& inverse = window_inverse(at);
  ASSERT_EQ(64u, inverse.size()) << "the window at " << at << " cannot steer the CRC";
  std::memset(bytes + at, 0, 8);
  const uint64_t wanted = crc_of(wire) ^ target;
  uint64_t window = 0;
  for (int bit = 0; bit < 64; ++bit)
    if (((wanted >> bit) & 1) != 0) window ^= inverse[bit];
  for (int k = 0; k < 8; ++k) bytes[at + k] = static_cast<unsigned char>(window >> (8 * k));
  wire.checksum = target;
  ASSERT_EQ(target, crc_of(wire));
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

// ---- transport records, as the layout in base/handle.h frames them ----

struct Record {
  uint8_t id = 0;
  std::vector<uint8_t> payload;
};

std::vector<Record> records_of(const WireHandle& wire) {
  std::vector<Record> out;
  size_t at = 0;
  while (at + 4 <= wire.records_bytes) {
    Record record;
    record.id = wire.records[at];
    const size_t length = wire.records[at + 2] | size_t{wire.records[at + 3]} << 8;
    record.payload.assign(wire.records + at + 4, wire.records + at + 4 + length);
    out.push_back(record);
    at += (4 + length + 7) & ~size_t{7};
  }
  return out;
}

// Frames `records` into `wire` (zero padding, zero after them); false when they do not fit.
bool write_records(WireHandle& wire, const std::vector<Record>& records) {
  size_t used = 0;
  for (const Record& record : records) used += (4 + record.payload.size() + 7) & ~size_t{7};
  if (used > sizeof(wire.records)) return false;
  std::memset(wire.records, 0, sizeof(wire.records));
  size_t at = 0;
  for (const Record& record : records) {
    wire.records[at] = record.id;
    wire.records[at + 2] = static_cast<uint8_t>(record.payload.size());
    wire.records[at + 3] = static_cast<uint8_t>(record.payload.size() >> 8);
    if (!record.payload.empty())
      std::memcpy(wire.records + at + 4, record.payload.data(), record.payload.size());
    at += (4 + record.payload.size() + 7) & ~size_t{7};
  }
  wire.records_bytes = static_cast<uint16_t>(used);
  return true;
}

// Where byte `byte` of record `index`'s payload sits in the wire handle.
size_t payload_offset(const std::vector<Record>& records, size_t index, size_t byte) {
  size_t at = offsetof(WireHandle, records);
  for (size_t i = 0; i < index; ++i) at += (4 + records[i].payload.size() + 7) & ~size_t{7};
  return at + 4 + byte;
}

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t count) {
  std::vector<uint8_t> bytes(count);
  for (uint8_t& byte : bytes) byte = static_cast<uint8_t>(rng());
  return bytes;
}

// The ways a forger changes a handle's transport records.
enum class RecordForgery {
  kAppendUnknown,
  kAppendRepeat,
  kRemove,
  kTruncate,
  kExtend,
  kRewrite,
  kSwapKey,
  kCount
};

const char* forgery_name(RecordForgery kind) {
  switch (kind) {
    case RecordForgery::kAppendUnknown:
      return "a record of a made-up transport appended";
    case RecordForgery::kAppendRepeat:
      return "a second record of a genuine one's transport";
    case RecordForgery::kRemove:
      return "a record removed";
    case RecordForgery::kTruncate:
      return "a record truncated";
    case RecordForgery::kExtend:
      return "a record extended";
    case RecordForgery::kRewrite:
      return "a record's bytes rewritten";
    case RecordForgery::kSwapKey:
      return "another region's record in place of the genuine one";
    case RecordForgery::kCount:
      break;
  }
  return "?";
}

// What forge_records made.
enum class Forged { kNotApplicable, kValidChecksum, kOwnersChecksum };

// Applies `kind` to `wire` (a genuine handle) and gives it the genuine handle's own checksum
// where the forgery leaves 8 bytes free to steer, else a valid one. kNotApplicable where `kind`
// does not apply (it changes a record and the handle has none, or the result would not fit).
Forged forge_records(WireHandle& wire, RecordForgery kind, const WireHandle& other,
                     std::mt19937_64& rng) {
  const uint64_t owners_checksum = wire.checksum;
  std::vector<Record> records = records_of(wire);
  const size_t pick = records.empty() ? 0 : rng() % records.size();
  int free_record = -1;  // the record whose payload holds the 8 steered bytes
  size_t free_at = 0;
  switch (kind) {
    case RecordForgery::kAppendUnknown:
    case RecordForgery::kAppendRepeat: {
      if (kind == RecordForgery::kAppendRepeat && records.empty()) return Forged::kNotApplicable;
      // Transport ids run 0..7 (kMaxTransports); 7 is beyond every registry tca builds.
      const uint8_t id = kind == RecordForgery::kAppendRepeat ? records[pick].id : 7;
      records.push_back({id, random_bytes(rng, 8 + rng() % 32)});
      free_record = static_cast<int>(records.size() - 1);
      break;
    }
    case RecordForgery::kRemove:
      if (records.empty()) return Forged::kNotApplicable;
      records.erase(records.begin() + static_cast<long>(pick));
      break;
    case RecordForgery::kTruncate: {
      if (records.empty() || records[pick].payload.empty()) return Forged::kNotApplicable;
      auto& payload = records[pick].payload;
      payload.resize(rng() % payload.size());
      if (payload.size() >= 8) free_record = static_cast<int>(pick);
      break;
    }
    case RecordForgery::kExtend: {
      if (records.empty()) return Forged::kNotApplicable;
      auto& payload = records[pick].payload;
      free_at = payload.size();
      const std::vector<uint8_t> more = random_bytes(rng, 8 + rng() % 24);
      payload.insert(payload.end(), more.begin(), more.end());
      free_record = static_cast<int>(pick);
      break;
    }
    case RecordForgery::kRewrite: {
      if (records.empty() || records[pick].payload.empty()) return Forged::kNotApplicable;
      auto& payload = records[pick].payload;
      // Bytes past the first 8 where there are any (those 8 are then steered), else anywhere.
      const size_t from = payload.size() > 8 ? 8 : 0;
      const int changes = 1 + static_cast<int>(rng() % 3);
      for (int c = 0; c < changes; ++c)
        payload[from + rng() % (payload.size() - from)] ^= static_cast<uint8_t>(1 + rng() % 255);
      if (rng() % 2 == 0) payload[from] = 200;  // e.g. a key's size byte, as an audit tried
      if (from == 8) free_record = static_cast<int>(pick);
      break;
    }
    case RecordForgery::kSwapKey: {
      const std::vector<Record> theirs = records_of(other);
      if (records.empty() || theirs.empty()) return Forged::kNotApplicable;
      records[pick].payload = theirs[0].payload;
      break;
    }
    case RecordForgery::kCount:
      return Forged::kNotApplicable;
  }
  if (!write_records(wire, records)) return Forged::kNotApplicable;
  if (free_record < 0) {
    reseal(wire);
    return Forged::kValidChecksum;
  }
  steer(wire, payload_offset(records, static_cast<size_t>(free_record), free_at), owners_checksum);
  return Forged::kOwnersChecksum;
}

// A region that is not a whole tcaMalloc block, and one in the caller's own memory: the two
// ways shm reaches a peer (memfd mapping, cross-memory attach).
// Hands `mine` to the previous rank and returns the next rank's handles, over the bootstrap
// (whichever started the job).
void exchange_with_neighbours(const std::vector<tcaHandle>& mine, std::vector<tcaHandle>* next) {
  int rank = 0;
  int size = 1;
  ASSERT_EQ(tcaRank(&rank), TCA_SUCCESS);
  ASSERT_EQ(tcaSize(&size), TCA_SUCCESS);
  const uint64_t count = mine.size();
  std::vector<uint64_t> counts(static_cast<size_t>(size));
  ASSERT_EQ(tcaBootstrapAllgather(&count, counts.data(), sizeof count), TCA_SUCCESS);
  const uint64_t most = *std::max_element(counts.begin(), counts.end());
  const int from = (rank + 1) % size;
  next->assign(counts[static_cast<size_t>(from)], tcaHandle{});
  if (most == 0) return;
  std::vector<tcaHandle> padded(mine);
  padded.resize(most);
  std::vector<tcaHandle> all(most * static_cast<size_t>(size));
  ASSERT_EQ(tcaBootstrapAllgather(padded.data(), all.data(), most * sizeof(tcaHandle)),
            TCA_SUCCESS);
  std::copy_n(all.begin() + static_cast<ptrdiff_t>(from * most), next->size(), next->begin());
}

class TwoRegions {
 public:
  static constexpr size_t kBytes = 4096;
  TwoRegions() : user_(kBytes), mine_(2) {
    EXPECT_TCA_OK(tcaMalloc(&block_, 2 * kBytes, TCA_MEM_CPU));
    EXPECT_TCA_OK(
        tcaCreateHandle(&mine_[0], static_cast<uint8_t*>(block_) + 1024, kBytes, TCA_MEM_CPU));
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

// The genuine handle still reaches its region: bytes put there (at `offset`, which no other
// rank writes meanwhile) come back.
void expect_genuine_works(const tcaHandle& genuine, uint64_t offset = 100) {
  uint8_t out[64];
  uint8_t in[64] = {};
  fill_pattern(out, sizeof(out), Pattern{world_rank(), 77}, 0);
  ASSERT_TCA_OK(tcaPut(&genuine, offset, out, sizeof(out)));
  ASSERT_TCA_OK(tcaGet(in, &genuine, offset, sizeof(in)));
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
      SCOPED_TRACE(::testing::Message()
                   << (which == 0 ? "tcaMalloc" : "user") << " region, " << forgery.what);
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

// Forged transport records with the owner's own checksum: shown first at the forger and at a
// third rank (no genuine use before), then the genuine handles work everywhere, then the
// forgeries are still refused.
TEST_P(TransportTest, ForgedRecordsWithTheOwnersChecksumAreRefusedEverywhere) {
  TwoRegions regions;
  const tcaHandle& own = regions.of(rank_, 0);
  std::mt19937_64 rng(0xf0 + static_cast<uint64_t>(rank_));
  std::vector<tcaHandle> forged;
  std::vector<std::string> what;
  int owners_checksum = 0;
  for (int which = 0; which < 2; ++which) {
    const WireHandle g = wire_of(regions.of(next_, which));
    const WireHandle other = wire_of(regions.of(next_, 1 - which));
    for (int kind = 0; kind < static_cast<int>(RecordForgery::kCount); ++kind) {
      for (int variant = 0; variant < 3; ++variant) {
        WireHandle w = g;
        const Forged made = forge_records(w, static_cast<RecordForgery>(kind), other, rng);
        ASSERT_FALSE(HasFatalFailure());
        if (made == Forged::kNotApplicable || std::memcmp(&w, &g, sizeof(w)) == 0) continue;
        owners_checksum += made == Forged::kOwnersChecksum ? 1 : 0;
        forged.push_back(handle_of(w));
        what.push_back(std::string(which == 0 ? "tcaMalloc" : "user") + " region, " +
                       forgery_name(static_cast<RecordForgery>(kind)));
      }
    }
  }
  EXPECT_GT(owners_checksum, 0);
  if (GetParam() == "ucx") {  // every region carries its UCX key: the records forged above
    EXPECT_FALSE(records_of(wire_of(regions.of(next_, 0))).empty());
  }
  // The forgeries go to the previous rank: there they name a region of neither that rank nor
  // (from 3 ranks on) the forger.
  std::vector<tcaHandle> shown;
  exchange_with_neighbours(forged, &shown);
  const auto refuse_all = [&](const char* when) {
    for (size_t i = 0; i < forged.size(); ++i) {
      SCOPED_TRACE(::testing::Message() << when << ", at the forger: " << what[i]);
      expect_refused(TCA_ERROR_INVALID_HANDLE, forged[i], own);
    }
    for (size_t i = 0; i < shown.size(); ++i) {
      SCOPED_TRACE(::testing::Message() << when << ", forgery " << i << " of rank " << next_);
      expect_refused(TCA_ERROR_INVALID_HANDLE, shown[i], own);
    }
  };
  refuse_all("before any genuine use");
  ASSERT_TCA_OK(tcaBarrier());
  const int third = (rank_ + 2) % size_;  // whose regions the forgeries shown here name
  for (int which = 0; which < 2; ++which) {
    ASSERT_NO_FATAL_FAILURE(expect_genuine_works(regions.of(next_, which), 100));
    ASSERT_NO_FATAL_FAILURE(expect_genuine_works(regions.of(third, which), 200));
  }
  ASSERT_TCA_OK(tcaBarrier());
  refuse_all("after the genuine handles were imported");
  ASSERT_TCA_OK(tcaBarrier());
}

// 10^5 random record forgeries over the job, as many as the layout allows with the owner's
// own checksum: none is accepted, and the genuine handles work afterwards.
TEST_P(TransportTest, RandomRecordForgeriesAcceptNothing) {
  TwoRegions regions;
  const std::vector<tcaHandle>& genuine = regions.all();
  const int wanted = 100000 / size_;
  std::mt19937_64 rng(0xabc + static_cast<uint64_t>(rank_));
  int made = 0, owners_checksum = 0, accepted = 0;
  for (int attempt = 0; made < wanted && attempt < 50 * wanted; ++attempt) {
    const tcaHandle& base = genuine[rng() % genuine.size()];
    const WireHandle g = wire_of(base);
    WireHandle w = g;
    const auto kind = static_cast<RecordForgery>(rng() % static_cast<int>(RecordForgery::kCount));
    const Forged result = forge_records(w, kind, wire_of(genuine[rng() % genuine.size()]), rng);
    ASSERT_FALSE(HasFatalFailure());
    if (result == Forged::kNotApplicable || std::memcmp(&w, &g, sizeof(w)) == 0) continue;
    ++made;
    owners_checksum += result == Forged::kOwnersChecksum ? 1 : 0;
    const tcaHandle handle = handle_of(w);
    int owner = -1;
    size_t size = 0;
    tcaMemKind memory = TCA_MEM_CPU;
    if (tcaHandleInfo(&handle, &owner, &size, &memory) == TCA_SUCCESS) ++accepted;
  }
  EXPECT_EQ(made, wanted);
  EXPECT_GT(owners_checksum, wanted / 10);
  EXPECT_EQ(accepted, 0) << "of " << made << " forged handles, " << owners_checksum
                         << " with their owner's checksum";
  for (int which = 0; which < 2; ++which)
    ASSERT_NO_FATAL_FAILURE(expect_genuine_works(regions.of(next_, which)));
  ASSERT_TCA_OK(tcaBarrier());
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
  ASSERT_TCA_OK(tcaCreateHandle(&handle, area, page, TCA_MEM_CPU));         // the good page is fine
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
  EXPECT_TCA_ERROR(TCA_ERROR_INVALID_ARGUMENT, tcaDescSetMemcpy2D(desc.get(), &dst.of(next_), 0, 16,
                                                                  &src.mine(), 0, 16, 8, 0, 0, 0));
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
  EXPECT_TCA_ERROR(
      TCA_ERROR_INVALID_ARGUMENT,
      tcaCollChooseAlgorithm(static_cast<tcaCollKind>(7), TCA_MEM_CPU, 8, 4, &algorithm));
  ASSERT_TCA_OK(tcaBarrier());
}

// Many separate registrations (more than Open MPI's osc/rdma attaches to one window) all stay
// reachable.
TEST_P(TransportTest, HundredsOfSeparateRegistrationsStayReachable) {
  constexpr int kRegions = 200;
  const long page = sysconf(_SC_PAGESIZE);
  // Every other page, so that no two registrations share or touch a page.
  std::vector<uint8_t> memory(static_cast<size_t>(2 * kRegions + 1) * page);
  auto* first = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(memory.data()) + page - 1) /
                                           page * page);
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
