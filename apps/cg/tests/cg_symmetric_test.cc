// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Symmetric storage: the upper triangle of NPB's matrix, the product it gives against the full
// matrix's, and NPB's power iteration on it; planted errors that the checks must catch. The
// slab tiles of the upper triangle: the segments of the blocks, and the GPU kernels' CPU model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "csr.h"
#include "layout.h"
#include "npb_class.h"
#include "npb_matrix.h"
#include "power_iteration.h"
#include "slab_format.h"
#include "symmetric.h"
#include "symmetric_tiles.h"

namespace tca_cg {
namespace {

LocalCsr whole_class(const char* name) {
  const NpbClass cls = *find_npb_class(name);
  return generate_npb_block(cls, MatrixBlock{0, cls.na, 0, cls.na, cls.na, cls.na}, 1);
}

std::vector<double> test_vector(int64_t n) {
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = 1.0 + std::sin(0.37 * static_cast<double>(i));
  return x;
}

// max |a - b| / max |b|
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff / scale;
}

TEST(SymmetricStorage, UpperTriangleHoldsTheDiagonalAndAbove) {
  const LocalCsr full = whole_class("S");
  const LocalCsr upper = upper_triangle(full);
  int64_t diagonal = 0;
  for (int64_t r = 0; r < upper.rows; ++r) {
    for (int64_t k = upper.row_ptr[r]; k < upper.row_ptr[r + 1]; ++k) {
      ASSERT_GE(upper.col[k], r);
      if (upper.col[k] == r) ++diagonal;
    }
  }
  EXPECT_EQ(diagonal, full.rows);
  // The pattern is symmetric: the strictly upper entries are half of the off-diagonal ones.
  EXPECT_EQ(2 * (upper.nnz() - diagonal), full.nnz() - diagonal);
}

TEST(SymmetricStorage, ProductMatchesTheFullMatrixOnEveryThreadCount) {
  for (const char* name : {"S", "W"}) {
    const LocalCsr full = whole_class(name);
    const LocalCsr upper = upper_triangle(full);
    const std::vector<double> x = test_vector(full.rows);
    std::vector<double> expected(full.rows), y(full.rows), again(full.rows), scratch;
    csr_multiply_reference(full, x.data(), expected.data());
    for (int threads : {1, 3, 4}) {
      symmetric_multiply(upper, x.data(), y.data(), threads, scratch);
      EXPECT_LT(relative_difference(y, expected), 1e-13) << name << ", " << threads << " threads";
      symmetric_multiply(upper, x.data(), again.data(), threads, scratch);
      EXPECT_EQ(y, again) << "the same bits on every run";
    }
  }
}

// A wrong entry in the upper triangle shows in both of its rows of the product.
TEST(SymmetricStorage, PlantedWrongEntryIsCaught) {
  const LocalCsr full = whole_class("S");
  LocalCsr upper = upper_triangle(full);
  const int64_t row = 100;
  const int64_t k = upper.row_ptr[row + 1] - 1;  // the row's last entry: above the diagonal
  ASSERT_GT(upper.col[k], row);
  upper.val[k] *= 1.0 + 1e-6;
  const std::vector<double> x = test_vector(full.rows);
  std::vector<double> expected(full.rows), y(full.rows), scratch;
  csr_multiply_reference(full, x.data(), expected.data());
  symmetric_multiply(upper, x.data(), y.data(), 2, scratch);
  EXPECT_GT(relative_difference(y, expected), 1e-13);
  EXPECT_GT(std::fabs(y[upper.col[k]] - expected[upper.col[k]]), 0.0);
}

TEST(SymmetricStorage, PowerIterationVerifiesOnClassesSAndW) {
  for (const char* name : {"S", "W"}) {
    const NpbClass cls = *find_npb_class(name);
    const LocalCsr upper = upper_triangle(whole_class(name));
    std::vector<double> scratch;
    const double zeta = power_iteration_zeta(
        cls, [&](const double* p, double* q) { symmetric_multiply(upper, p, q, 3, scratch); });
    EXPECT_TRUE(npb_verified(cls, zeta)) << name << ": zeta " << zeta;
  }
}

// Verification is sensitive enough to see a wrong diagonal entry of the stored triangle.
TEST(SymmetricStorage, PlantedWrongDiagonalFailsVerification) {
  const NpbClass cls = *find_npb_class("S");
  LocalCsr upper = upper_triangle(whole_class("S"));
  for (int64_t r = 0; r < upper.rows; r += 7)
    upper.val[upper.row_ptr[r]] += 1e-3;  // a row's first entry: its diagonal
  std::vector<double> scratch;
  const double zeta = power_iteration_zeta(
      cls, [&](const double* p, double* q) { symmetric_multiply(upper, p, q, 2, scratch); });
  EXPECT_FALSE(npb_verified(cls, zeta)) << "zeta " << zeta;
}

TEST(SymmetricTiles, SegmentsFollowTheBlocksShares) {
  // 3 slabs of 10, 0 and 5 tiles over 4 blocks: tiles [0,3) [3,7) [7,11) [11,15).
  const TileSegments s = tile_segments({0, 10, 10, 15}, 4);
  EXPECT_EQ(s.first_block, (std::vector<int32_t>{0, 0, 2}));
  EXPECT_EQ(s.first_segment, (std::vector<int64_t>{0, 3, 3, 5}));
  EXPECT_EQ(s.segments(), 5);
  // More blocks than tiles (blocks 2, 5 and 7 hold one each): a slab's segments run from its
  // first block to its last, the empty blocks between them included (their sums stay zero).
  const TileSegments few = tile_segments({0, 2, 3}, 8);
  EXPECT_EQ(few.first_segment, (std::vector<int64_t>{0, 4, 5}));
  EXPECT_EQ(few.first_block, (std::vector<int32_t>{2, 7}));
  EXPECT_THROW(tile_segments({0, 3, 2}, 2), std::invalid_argument);
  EXPECT_THROW(tile_segments({}, 2), std::invalid_argument);
  EXPECT_THROW(tile_segments({0, 4}, 0), std::invalid_argument);
  EXPECT_EQ(symmetric_width_limit(232448), 14496);  // H100/H200: 227 KiB a block
  EXPECT_EQ(symmetric_width_limit(100), 32);
}

// The row sums of the tiles (tiled_slabs_multiply) and the segments' column sums, added as the
// second kernel adds them, against the full matrix's product; every block count cuts the
// slabs differently.
void expect_symmetric_tiles_like_full(const LocalCsr& full, int width_limit, int blocks) {
  const LocalCsr upper = upper_triangle(full);
  const SlabShape shape = slab_shape(upper.cols, width_limit);
  const TiledSlabs tiles = build_tiled_slabs(upper, shape);
  const TileSegments segments = tile_segments(tiles.slab_tiles, blocks);
  std::vector<double> x = test_vector(full.rows);
  x.resize(static_cast<size_t>(shape.slabs) * shape.width, 0.0);
  std::vector<double> partial(static_cast<size_t>(shape.slabs) * full.rows, 0.0);
  std::vector<double> sums(static_cast<size_t>(segments.segments()) * shape.width, -1.0);
  tiled_slabs_multiply(tiles, x.data(), partial.data());
  tiled_slabs_scatter(tiles, segments, x.data(), sums.data());
  std::vector<double> y(full.rows), expected(full.rows);
  symmetric_tiles_sum(tiles, segments, partial.data(), sums.data(), y.data());
  csr_multiply_reference(full, x.data(), expected.data());
  EXPECT_LT(relative_difference(y, expected), 1e-13)
      << shape.slabs << " slabs of " << shape.width << ", " << blocks << " blocks";
}

TEST(SymmetricTiles, ProductMatchesTheFullMatrix) {
  const LocalCsr s = whole_class("S"), w = whole_class("W");
  for (int blocks : {1, 3, 7, 132}) {
    expect_symmetric_tiles_like_full(s, 14496, blocks);  // one slab
    expect_symmetric_tiles_like_full(s, 320, blocks);    // 5 slabs
    expect_symmetric_tiles_like_full(w, 1024, blocks);   // 7 slabs
  }
}

// A wrong entry above the diagonal shows in both of its rows, the column's through the
// segments' sums.
TEST(SymmetricTiles, PlantedWrongEntryShowsInItsColumn) {
  const LocalCsr full = whole_class("S");
  const LocalCsr upper = upper_triangle(full);
  const SlabShape shape = slab_shape(upper.cols, 320);
  TiledSlabs tiles = build_tiled_slabs(upper, shape);
  const int64_t t = tiles.slab_tiles[3] + 2;  // a tile of slab 3, rows below its columns
  const size_t e = static_cast<size_t>(t) * kTileEntries + 5;
  const int64_t col = 3 * shape.width + tiles.col[e];
  tiles.val[static_cast<size_t>(t) * kTileEntries + tile_value_index(0, 5)] += 0.5;
  const TileSegments segments = tile_segments(tiles.slab_tiles, 4);
  std::vector<double> x = test_vector(full.rows);
  x.resize(static_cast<size_t>(shape.slabs) * shape.width, 0.0);
  std::vector<double> partial(static_cast<size_t>(shape.slabs) * full.rows, 0.0);
  std::vector<double> sums(static_cast<size_t>(segments.segments()) * shape.width);
  tiled_slabs_multiply(tiles, x.data(), partial.data());
  tiled_slabs_scatter(tiles, segments, x.data(), sums.data());
  std::vector<double> y(full.rows), expected(full.rows);
  symmetric_tiles_sum(tiles, segments, partial.data(), sums.data(), y.data());
  csr_multiply_reference(full, x.data(), expected.data());
  ASSERT_LT(tiles.tile_row[t], 3 * shape.width);
  EXPECT_GT(std::fabs(y[col] - expected[col]), 0.1);
}

}  // namespace
}  // namespace tca_cg
