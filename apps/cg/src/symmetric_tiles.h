// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Symmetric storage in slab tiles, the GPU's symmetric SpMV on one rank: the upper triangle U
// (with the diagonal) cut into column slabs and tiles as slab_format.h describes, and each
// stored entry a(i, j) used twice, y(i) += a(i, j) x(j) (the row sums, as the tile kernel) and,
// for j > i, y(j) += a(i, j) x(i) (the transposed terms). A block keeps two slabs of doubles in
// shared memory, x's and the slab's column sums, so slabs are half as wide as the tile
// kernel's. The column sums are added in shared memory and stored once per segment: the tiles
// of one slab that one block takes (block b of G takes tiles [T b / G, T (b + 1) / G), as the
// tile kernel). A second kernel adds, for row i, the row sums of the slabs from i's own on
// (U has no entries left of the diagonal) and the column sums of the segments of i's slab.
#pragma once

#include <cstdint>
#include <vector>

#include "slab_format.h"

namespace tca_cg {

// The segments of G blocks over the slabs' tiles, numbered slab by slab, each slab's in block
// order: slab s's segments are first_segment[s] .. first_segment[s + 1] - 1, the first of them
// block first_block[s]'s, one for each block from the first to the last with tiles of the slab
// (where there are more blocks than tiles, blocks between them may have none: their sums must
// hold zero); a slab without tiles has none.
struct TileSegments {
  int blocks = 0;
  std::vector<int32_t> first_block;    // slabs
  std::vector<int64_t> first_segment;  // slabs + 1
  int64_t segments() const { return first_segment.empty() ? 0 : first_segment.back(); }
};
// Throws std::invalid_argument where blocks < 1 or slab_tiles is empty or not ascending.
TileSegments tile_segments(const std::vector<int64_t>& slab_tiles, int blocks);

// The column width of the symmetric kernel's slabs for a block's `shared_limit` bytes of shared
// memory (two slabs of doubles and a word), a multiple of 32 in [32, 65536].
int symmetric_width_limit(int shared_limit);

// The kernel's transposed terms on the CPU, block by block as the segments cut them:
// sums[segment * width + c] = the sum over the segment's entries a(i, j) with j = slab start +
// c > i of a(i, j) x(i). `tiles` holds the upper triangle of a square matrix.
void tiled_slabs_scatter(const TiledSlabs& tiles, const TileSegments& segments, const double* x,
                         double* sums);

// y(i) = sum over slabs s >= i / width of partial[s * rows + i] + sum over the segments of
// slab i / width of sums[segment * width + i - slab start]: the second kernel, on the CPU.
void symmetric_tiles_sum(const TiledSlabs& tiles, const TileSegments& segments,
                         const double* partial, const double* sums, double* y);

}  // namespace tca_cg
