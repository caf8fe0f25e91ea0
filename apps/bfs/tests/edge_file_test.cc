// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Edge files: both record formats, shares read by every rank, and the checks of bad files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "agree.h"
#include "control.h"
#include "edge_list.h"
#include "kronecker.h"
#include "roots.h"
#include "test_graph.h"

namespace bfs {
namespace {

using test::world_rank;
using test::world_size;

// A file name every rank agrees on, removed at the end.
class TempPath {
 public:
  explicit TempPath(const std::string& tag) {
    long long id = world_rank() == 0 ? static_cast<long long>(getpid()) : 0;
    tca_apps::broadcast(&id, sizeof id, 0);
    path_ = (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
            "/tca-bfs-test-" + std::to_string(id) + "-" + tag;
  }
  ~TempPath() {
    tca_apps::barrier();
    if (world_rank() == 0) std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void write_raw(const std::string& path, const std::string& bytes) {
  if (world_rank() == 0) std::ofstream(path, std::ios::binary) << bytes;
  tca_apps::barrier();
}

TEST(EdgeRecords, RoundTripInBothFormats) {
  const Edge edges[] = {
      {0, 0}, {1, 2}, {0xFFFFFFFFll, 0x100000000ll}, {0xABCDEF012345ll, 0x123456789ABCll}};
  for (const EdgeFormat format : {EdgeFormat::kInt64, EdgeFormat::kPacked48}) {
    for (const Edge& e : edges) {
      unsigned char record[16] = {};
      encode_record(format, e, record);
      const Edge back = decode_record(format, record);
      EXPECT_EQ(back.u, e.u);
      EXPECT_EQ(back.v, e.v);
    }
  }
  // packed48: low words first, then the high halves (StartVertex's in the low 16 bits).
  unsigned char record[12];
  encode_record(EdgeFormat::kPacked48, Edge{0x0001000000AAll, 0x0002000000BBll}, record);
  const unsigned char expected[12] = {0xAA, 0, 0, 0, 0xBB, 0, 0, 0, 0x01, 0x00, 0x02, 0x00};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(record[i], expected[i]) << "byte " << i;
}

TEST(EdgeFiles, WrittenByAllRanksReadBackBySharesInBothFormats) {
  const std::vector<Edge> all = test::kronecker_edges(9, 4, 8);
  for (const EdgeFormat format : {EdgeFormat::kInt64, EdgeFormat::kPacked48}) {
    TempPath file(std::string("roundtrip.") + edge_format_name(format));
    EdgeListInfo info;
    info.vertices = 512;
    info.tuples = all.size();
    info.share = even_share(all.size(), world_rank(), world_size());
    write_edges(file.path(), format,
                std::vector<Edge>(all.begin() + info.share.first, all.begin() + info.share.last),
                info);
    EdgeListInfo read_info;
    const std::vector<Edge> mine = read_edges(file.path(), format, 512, read_info);
    EXPECT_EQ(read_info.tuples, all.size());
    ASSERT_EQ(mine.size(), read_info.share.size());
    for (size_t i = 0; i < mine.size(); ++i) {
      ASSERT_EQ(mine[i].u, all[read_info.share.first + i].u);
      ASSERT_EQ(mine[i].v, all[read_info.share.first + i].v);
    }
  }
}

// The file one rank writes alone (the others writing nothing) is byte for byte the one all ranks
// write together.
TEST(EdgeFiles, TheSameFileWhateverTheRanks) {
  const std::vector<Edge> all = test::kronecker_edges(8, 8, 9);
  TempPath together("together"), alone("alone");
  EdgeListInfo info;
  info.vertices = 256;
  info.tuples = all.size();
  info.share = even_share(all.size(), world_rank(), world_size());
  write_edges(together.path(), EdgeFormat::kPacked48,
              std::vector<Edge>(all.begin() + info.share.first, all.begin() + info.share.last),
              info);
  // Rank 0 writes every tuple, the others none.
  EdgeListInfo whole = info;
  whole.share = world_rank() == 0 ? Range{0, all.size()} : Range{all.size(), all.size()};
  write_edges(alone.path(), EdgeFormat::kPacked48, world_rank() == 0 ? all : std::vector<Edge>(),
              whole);
  if (world_rank() == 0) {
    std::ifstream a(together.path(), std::ios::binary), b(alone.path(), std::ios::binary);
    const std::string bytes_a((std::istreambuf_iterator<char>(a)), {});
    const std::string bytes_b((std::istreambuf_iterator<char>(b)), {});
    EXPECT_EQ(bytes_a.size(), all.size() * 12);
    EXPECT_TRUE(bytes_a == bytes_b);
  }
}

void expect_read_fails(const std::string& path, EdgeFormat format, uint64_t vertices,
                       const std::string& needle) {
  EdgeListInfo info;
  try {
    read_edges(path, format, vertices, info);
    FAIL() << "reading " << path << " should fail with '" << needle << "'";
  } catch (const AgreedError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(EdgeFiles, BadFilesAreRefusedWithTheValue) {
  TempPath file("bad");
  write_raw(file.path(), std::string(16 * 3 + 5, '\0'));
  expect_read_fails(file.path(), EdgeFormat::kInt64, 10,
                    "its size, 53 bytes, is not a whole number of 16-byte int64 records");
  write_raw(file.path(), std::string(12 * 4 + 1, '\0'));
  expect_read_fails(file.path(), EdgeFormat::kPacked48, 10,
                    "49 bytes, is not a whole number of 12-byte packed48");
  // Tuple 2 names vertex 10 in a graph of 10 vertices.
  std::string bytes(16 * 4, '\0');
  bytes[2 * 16 + 8] = 10;
  write_raw(file.path(), bytes);
  expect_read_fails(file.path(), EdgeFormat::kInt64, 10,
                    "record 2 has vertex id 10, outside [0, 10)");
  expect_read_fails(file.path() + ".missing", EdgeFormat::kInt64, 10, "cannot open");
}

}  // namespace
}  // namespace bfs

namespace bfs {
namespace {

// A graph read from a file (either format) is the generated graph: the same nedge per search
// key, every search validated.
TEST(EdgeFiles, FileInputGivesTheNedgeOfTheGeneratedGraph) {
  const int scale = 10;
  const KroneckerGenerator generator(scale, 16, 23);
  const std::vector<Edge> all = test::kronecker_edges(scale, 16, 23);
  test::TestGraph generated(all, generator.vertices(), "cpu");
  const std::vector<SearchKey> keys =
      sample_keys(generated.partition(), test::world_rank(), 23, 8, generated.backend().degrees());
  for (const EdgeFormat format : {EdgeFormat::kInt64, EdgeFormat::kPacked48}) {
    SCOPED_TRACE(edge_format_name(format));
    TempPath file(std::string("input.") + edge_format_name(format));
    EdgeListInfo info;
    info.vertices = generator.vertices();
    info.tuples = generator.edges();
    info.share = even_share(info.tuples, test::world_rank(), test::world_size());
    write_edges(file.path(), format, generated.my_edges(), info);
    EdgeListInfo read_info;
    std::vector<Edge> mine = read_edges(file.path(), format, generator.vertices(), read_info);
    for (const std::string& device : test::devices()) {
      test::TestGraph from_file(mine, read_info, device);
      for (const SearchKey& key : keys) {
        ASSERT_TRUE(generated.search(key.vertex, test::reference_comm()));
        ASSERT_TRUE(from_file.search(key.vertex, test::reference_comm()));
        EXPECT_EQ(from_file.nedge(), generated.nedge()) << "search key " << key.vertex;
        const Validation v = from_file.validate(key.vertex);
        EXPECT_TRUE(v.ok()) << device << ", search key " << key.vertex << ": " << v.detail;
      }
    }
  }
}

}  // namespace
}  // namespace bfs
