// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Column slabs of a rank's block, as the GPU's own SpMV kernels read them, built on the CPU:
// the slabs' shape, the statistics the choice between the two slab kernels is made from, the
// row groups' format, and the tiled format of the tile kernel (with a CPU model of that
// kernel's arithmetic).
//
// The block's columns are cut into `slabs` slabs of `width` columns (equal widths, a multiple
// of 32, at most what one block's shared memory holds), so that a slab of x sits in shared
// memory while a kernel streams the slab's entries. Two kernels read slabs:
//
// - rows: slab s holds, row by row, the entries of its columns (16-bit columns local to the
//   slab, 32-bit offsets per slab and row; each row's part padded to whole pairs); a group of
//   8, 16 or 32 threads takes a row.
// - tiles: slab s holds its entries row by row in tiles of 256 (32 lanes x 8 entries); a tile
//   holds whole rows of the slab (a row's entries of one slab never straddle two tiles), on
//   consecutive rows: a row without entries between two rows of a tile gets one zero entry
//   (a gap of more than kTileGapFill such rows starts a new tile instead). The tile is padded
//   with zero entries that join its last row. Per entry: the value, the 16-bit column in the
//   slab and one bit, set where the entry starts a row; per tile: the first row. A warp
//   takes a tile: each lane its 8 consecutive entries (one 16-byte load of columns, four of
//   values, one byte of row-start bits), finds their rows from the bits (a prefix count over
//   the lanes), sums them row by row, and the rows that cross lanes are completed by a
//   segmented scan over the warp's lanes.
//
// In both, a row's entries of a slab are stored in the order bank_order.h chooses for shared
// memory's banks, not by column.
//
// Both write one partial sum per (slab, row); a second kernel adds the slabs in order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "csr.h"

namespace tca_cg {

struct SlabShape {
  int slabs = 1;
  int width = 32;  // columns per slab
};
// The fewest equal slabs of at most `width_limit` columns (a multiple of 32, at most 65536)
// that cover `cols`, each as wide as a multiple of 32 allows.
SlabShape slab_shape(int64_t cols, int width_limit);

// What the choice of a slab kernel looks at.
struct SlabStatistics {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  SlabShape shape;
  double mean_per_row_slab = 0;  // nnz / (rows with entries x slabs)
  int64_t max_per_row_slab = 0;  // most entries of one row in one slab
  int64_t tiles = 0;  // tiles of the tiled format (0 where a row's slab part exceeds a tile)
};
SlabStatistics slab_statistics(const LocalCsr& matrix, SlabShape shape);

enum class SlabKernel { kRows, kTiles };
const char* slab_kernel_name(SlabKernel kernel);

struct SlabKernelChoice {
  SlabKernel kernel = SlabKernel::kRows;
  std::string reason;  // one line: the statistics and the rule that decided
};
// Tiles where every row's part of a slab fits a tile and either a row's part of a slab is short
// (mean below kTileMeanLimit entries, where the row groups of the rows kernel idle), or it is
// below kTileLongMeanLimit and each of the tile kernel's `resident_blocks` has at least
// kTilesPerBlockLimit tiles (the slabs of x it loads are then a small part of its work); else
// rows. Measured (docs/CG.md): on H100 at 8.9 entries (class D's row block on 4 GPUs) tiles
// took 38% of the rows kernel's time; on one H200 with tca-cg --spmv-alone, at 40 entries
// (class C) tiles were 2% faster with 1165 tiles a block (one GPU's block), 3% slower with 583
// (two), 9% slower with 292 (four); at 61 (class B) rows were faster at every count.
inline constexpr double kTileMeanLimit = 24.0;
inline constexpr double kTileLongMeanLimit = 48.0;
inline constexpr double kTilesPerBlockLimit = 768.0;
SlabKernelChoice choose_slab_kernel(const SlabStatistics& statistics, int resident_blocks);

inline constexpr int kTileLanes = 32;
inline constexpr int kTileLaneEntries = 8;
inline constexpr int kTileEntries = kTileLanes * kTileLaneEntries;  // 256
inline constexpr int kTileGapFill =
    4;  // rows without entries filled with a zero entry inside a tile

// Where entry j (0..7) of lane l is stored among a tile's 256 values: pairs of a lane side by
// side, so that a warp's k-th 16-byte load (entries 2k, 2k+1 of every lane) reads 512
// consecutive bytes. Columns are stored lane after lane (index l * 8 + j), the row-start bits
// a byte per lane (bit j of byte l: entry l * 8 + j starts a row).
constexpr int tile_value_index(int lane, int j) {
  return (j / 2) * 2 * kTileLanes + lane * 2 + (j % 2);
}

// The load that reads entry e's column of x from shared memory (bank_order.h): the tile kernel
// loads entry j of every lane at once, and a half-warp (16 lanes) is served on its own.
constexpr int tile_slot_group(int e) {
  return (e / kTileLaneEntries) / 16 * kTileLaneEntries + e % kTileLaneEntries;
}
inline constexpr int kTileSlotGroups = kTileLanes / 16 * kTileLaneEntries;

struct TiledSlabs {
  SlabShape shape;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;  // entries of the matrix (padding not counted)
  int64_t tiles = 0;
  std::vector<int64_t> slab_tiles;  // slabs + 1: first tile of each slab
  std::vector<int32_t> tile_row;    // first row of each tile
  std::vector<double> val;          // tiles x 256 (tile_value_index order)
  std::vector<uint16_t> col;        // tiles x 256, column inside the slab
  std::vector<uint8_t> starts;      // tiles x 32: the row-start bits, a byte per lane
};
// Throws std::invalid_argument where a row's part of a slab exceeds a tile or the rows exceed
// 32-bit indices. `threads` order the tiles' rows in parallel (the format is the same for any
// count).
TiledSlabs build_tiled_slabs(const LocalCsr& matrix, SlabShape shape, int threads = 1);

// The row-group kernel's format: slab s holds, row by row, each row's entries of its columns
// (16-bit columns local to the slab) in the order bank_order.h chooses for `lanes` threads a
// row; each row's part of a slab fills an even count of slots at an even offset (a zero entry
// of column 0 pads an odd one), so that the kernel loads whole pairs.
struct RowSlabs {
  SlabShape shape;
  int64_t rows = 0;
  std::vector<int64_t> base;      // slabs + 1: each slab's first slot
  std::vector<uint32_t> row_ptr;  // slabs x (rows + 1): each row's first slot within its slab
  std::vector<uint16_t> col;      // base[slabs] slots, column inside the slab
  std::vector<double> val;
};
// Throws std::invalid_argument where a slab would hold more than 2^32 - 2 slots. `threads`
// order the rows in parallel (the format is the same for any count).
RowSlabs build_row_slabs(const LocalCsr& matrix, SlabShape shape, int lanes, int threads = 1);

// The row of entry j of a lane, relative to the tile's first row: `before` row starts in
// the lanes before it, `bits` its own byte.
constexpr int tile_entry_row(int before, unsigned bits, int j) {
  unsigned mask = (2u << j) - 1u, set = bits & mask;
  int count = 0;
  for (; set != 0; set &= set - 1) ++count;
  return before + count - 1;
}

// The tile kernel's arithmetic on the CPU, in its order (each lane's entries in sequence,
// then the segmented scan over lanes): partial[s * rows + row] for every (slab, row) with
// entries; other elements are left as they are.
void tiled_slabs_multiply(const TiledSlabs& tiles, const double* x, double* partial);

}  // namespace tca_cg
