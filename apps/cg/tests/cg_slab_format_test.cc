// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU slab formats' CPU side (slab_format.h): the slabs' shape, the statistics and the
// choice of slab kernel, and the tiled format, whose CPU model of the tile kernel must give
// the CSR product on NPB blocks and on matrices built to hit the packing's edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "csr.h"
#include "layout.h"
#include "npb_class.h"
#include "npb_matrix.h"
#include "slab_format.h"

namespace tca_cg {
namespace {

LocalCsr npb_block(char name, Partition partition, int ranks, int rank) {
  const NpbClass cls = *find_npb_class(std::string(1, name));
  const Layout layout = make_layout(partition, cls.na, ranks, rank);
  return generate_npb_block(cls, layout.block, 1);
}

// A matrix from per-row column lists, values drawn at random.
LocalCsr from_rows(const std::vector<std::vector<int32_t>>& rows, int64_t cols, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  LocalCsr csr;
  csr.rows = static_cast<int64_t>(rows.size());
  csr.cols = cols;
  csr.row_ptr.assign(csr.rows + 1, 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int32_t c : rows[r]) {
      csr.col.push_back(c);
      csr.val.push_back(value(random));
    }
    csr.row_ptr[r + 1] = static_cast<int64_t>(csr.col.size());
  }
  return csr;
}

// The tiled product (slabs added in order) against the CSR loop, and the format's invariants.
void expect_tiles_multiply_like_csr(const LocalCsr& matrix, int width_limit) {
  const SlabShape shape = slab_shape(matrix.cols, width_limit);
  const TiledSlabs tiles = build_tiled_slabs(matrix, shape);
  const SlabStatistics statistics = slab_statistics(matrix, shape);
  EXPECT_EQ(statistics.tiles, tiles.tiles);
  ASSERT_EQ(tiles.slab_tiles.size(), static_cast<size_t>(shape.slabs) + 1);
  ASSERT_EQ(tiles.starts.size(), static_cast<size_t>(tiles.tiles) * kTileLanes);
  for (int64_t t = 0; t < tiles.tiles; ++t) {  // a tile's first entry starts its first row
    ASSERT_EQ(tiles.starts[static_cast<size_t>(t) * kTileLanes] & 1u, 1u) << "tile " << t;
  }
  for (int s = 0; s < shape.slabs; ++s) {  // a slab's tiles in row order, each starting a new row
    for (int64_t t = tiles.slab_tiles[s] + 1; t < tiles.slab_tiles[s + 1]; ++t) {
      ASSERT_GT(tiles.tile_row[t], tiles.tile_row[t - 1]);
    }
  }
  // Entries kept: the matrix's, plus zero padding.
  int64_t nonzero = 0;
  for (double v : tiles.val) nonzero += v != 0.0;
  EXPECT_LE(nonzero, matrix.nnz());
  EXPECT_GE(tiles.tiles * kTileEntries, matrix.nnz());

  std::mt19937 random(7);
  std::uniform_real_distribution<double> value(0.5, 1.5);
  std::vector<double> x(static_cast<size_t>(shape.slabs) * shape.width, 0.0);
  for (int64_t c = 0; c < matrix.cols; ++c) x[c] = value(random);
  std::vector<double> expected(matrix.rows);
  csr_multiply_reference(matrix, x.data(), expected.data());
  std::vector<double> partial(static_cast<size_t>(shape.slabs) * matrix.rows, 0.0);
  tiled_slabs_multiply(tiles, x.data(), partial.data());
  for (int64_t r = 0; r < matrix.rows; ++r) {
    double y = 0.0;
    for (int s = 0; s < shape.slabs; ++s) y += partial[static_cast<size_t>(s) * matrix.rows + r];
    ASSERT_NEAR(y, expected[r], 1e-12 * (1.0 + std::fabs(expected[r]))) << "row " << r;
  }
}

TEST(SlabFormat, ShapeCoversTheColumnsWithEqualSlabs) {
  const SlabShape c = slab_shape(150000, 29056);  // class C on one H100/H200 block (227 KiB)
  EXPECT_EQ(c.slabs, 6);
  EXPECT_EQ(c.width % 32, 0);
  EXPECT_LE(c.width, 29056);
  EXPECT_GE(static_cast<int64_t>(c.slabs) * c.width, 150000);
  const SlabShape d = slab_shape(1500000, 29056);  // class D's columns
  EXPECT_EQ(d.slabs, 52);
  EXPECT_GE(static_cast<int64_t>(d.slabs) * d.width, 1500000);
  EXPECT_LE(d.width, 29056);
  const SlabShape small = slab_shape(100, 29056);
  EXPECT_EQ(small.slabs, 1);
  EXPECT_EQ(small.width, 128);
  const SlabShape wide = slab_shape(1000000, 1000000);  // 16-bit columns: at most 65536 a slab
  EXPECT_EQ(wide.slabs, 16);
  EXPECT_LE(wide.width, 65536);
}

TEST(SlabFormat, TilesMultiplyLikeCsrOnNpbBlocks) {
  expect_tiles_multiply_like_csr(npb_block('S', Partition::kOneD, 1, 0), 29056);  // one slab
  expect_tiles_multiply_like_csr(npb_block('S', Partition::kOneD, 1, 0), 320);    // 5 slabs
  expect_tiles_multiply_like_csr(npb_block('W', Partition::kOneD, 3, 1), 1024);
  expect_tiles_multiply_like_csr(npb_block('W', Partition::kTwoD, 4, 3), 640);  // a padded 2d block
}

TEST(SlabFormat, TilesMultiplyLikeCsrAtThePackingEdges) {
  const int64_t cols = 1024;
  std::vector<std::vector<int32_t>> rows;
  // 300 rows of one entry each (a tile covers at most 256 rows), empty rows between rows.
  for (int r = 0; r < 300; ++r) rows.push_back({static_cast<int32_t>(r % 97)});
  for (int r = 0; r < 5; ++r) rows.push_back({});
  // Gaps of 1 to 6 rows without entries between short rows (up to kTileGapFill filled).
  for (int gap = 1; gap <= 6; ++gap) {
    rows.push_back({3, 700});
    for (int r = 0; r < gap; ++r) rows.push_back({});
  }
  // A row filling a tile exactly in slab 0, one 255 long, then short rows after it.
  std::vector<int32_t> full(256), almost(255);
  for (int k = 0; k < 256; ++k) full[k] = k;
  for (int k = 0; k < 255; ++k) almost[k] = k;
  rows.push_back(full);
  rows.push_back(almost);
  rows.push_back({1, 2});
  // Rows of random lengths spread over both slabs; slab 1 empty in some.
  std::mt19937 random(3);
  for (int r = 0; r < 2000; ++r) {
    std::vector<int32_t> row;
    const int length = static_cast<int>(random() % 40);
    const int32_t span = r % 7 == 0 ? 512 : 1024;
    for (int k = 0; k < length; ++k) row.push_back(static_cast<int32_t>(random() % span));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    rows.push_back(row);
  }
  const LocalCsr matrix = from_rows(rows, cols, 11);
  expect_tiles_multiply_like_csr(matrix, 512);   // two slabs
  expect_tiles_multiply_like_csr(matrix, 4096);  // one slab
}

TEST(SlabFormat, ARowLongerThanATileIsRefusedAndLeftToRowGroups) {
  std::vector<int32_t> long_row(300);
  for (int k = 0; k < 300; ++k) long_row[k] = k;
  const LocalCsr matrix = from_rows({{0, 5}, long_row, {7}}, 512, 5);
  const SlabShape shape = slab_shape(matrix.cols, 4096);
  EXPECT_THROW(build_tiled_slabs(matrix, shape), std::invalid_argument);
  EXPECT_EQ(tile_entry_row(5, 0b00000001u, 0), 5);  // the lane's first entry starts a row
  EXPECT_EQ(tile_entry_row(5, 0b00000100u, 1), 4);  // still the row begun before the lane
  EXPECT_EQ(tile_entry_row(5, 0b10000100u, 7), 6);
  const SlabStatistics statistics = slab_statistics(matrix, shape);
  EXPECT_EQ(statistics.max_per_row_slab, 300);
  EXPECT_EQ(statistics.tiles, 0);
  const SlabKernelChoice choice = choose_slab_kernel(statistics, 132);
  EXPECT_EQ(choice.kernel, SlabKernel::kRows);
  EXPECT_NE(choice.reason.find("exceeds a tile"), std::string::npos) << choice.reason;
  // Split over two slabs, the row fits.
  expect_tiles_multiply_like_csr(matrix, 256);
}

TEST(SlabFormat, ChoiceFollowsTheEntriesPerRowAndSlab) {
  constexpr int kBlocks = 132;  // the tile kernel's resident blocks on an H100 or H200
  SlabStatistics s;
  s.rows = 375000;
  s.cols = 1500000;
  s.shape = slab_shape(s.cols, 29056);
  s.nnz = 375000LL * 480;
  s.mean_per_row_slab = 480.0 / s.shape.slabs;  // about 9: class D's row block on 4 GPUs
  s.max_per_row_slab = 40;
  s.tiles = 1;
  SlabKernelChoice choice = choose_slab_kernel(s, kBlocks);
  EXPECT_EQ(choice.kernel, SlabKernel::kTiles) << choice.reason;
  EXPECT_NE(choice.reason.find("52 slabs"), std::string::npos) << choice.reason;
  // Class C (40 entries per row and slab): tiles where each block has many of them (one GPU's
  // block), row groups on 2 and 4 GPUs' blocks.
  s.mean_per_row_slab = 40.1;
  s.max_per_row_slab = 104;
  s.tiles = 153806;  // one GPU: 1165 a block
  choice = choose_slab_kernel(s, kBlocks);
  EXPECT_EQ(choice.kernel, SlabKernel::kTiles) << choice.reason;
  EXPECT_NE(choice.reason.find("1165 tiles a block"), std::string::npos) << choice.reason;
  s.tiles = 76927;  // two GPUs: 583 a block
  EXPECT_EQ(choose_slab_kernel(s, kBlocks).kernel, SlabKernel::kRows);
  s.tiles = 38511;  // four GPUs: 292 a block
  EXPECT_EQ(choose_slab_kernel(s, kBlocks).kernel, SlabKernel::kRows);
  s.tiles = 153806;  // the same tiles on a device that holds four times the blocks
  EXPECT_EQ(choose_slab_kernel(s, 4 * kBlocks).kernel, SlabKernel::kRows);
  // Class B (61): row groups however many tiles.
  s.mean_per_row_slab = 60.9;
  s.tiles = 10 * 61275;
  choice = choose_slab_kernel(s, kBlocks);
  EXPECT_EQ(choice.kernel, SlabKernel::kRows) << choice.reason;
  // A row's part of a slab over a tile: row groups even where the mean is short.
  s.mean_per_row_slab = kTileMeanLimit - 1;
  s.max_per_row_slab = kTileEntries + 1;
  s.tiles = 0;
  EXPECT_EQ(choose_slab_kernel(s, kBlocks).kernel, SlabKernel::kRows);
  // The statistics of a real block: class W, one rank, slabs of 1024 columns.
  const LocalCsr w = npb_block('W', Partition::kOneD, 1, 0);
  const SlabStatistics ws = slab_statistics(w, slab_shape(w.cols, 1024));
  EXPECT_EQ(ws.nnz, w.nnz());
  EXPECT_NEAR(ws.mean_per_row_slab, static_cast<double>(w.nnz()) / (7000.0 * ws.shape.slabs), 1e-9);
  EXPECT_GT(ws.tiles, 0);
}

}  // namespace
}  // namespace tca_cg
