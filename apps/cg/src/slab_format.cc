// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "slab_format.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "bank_order.h"
#include "threads.h"

namespace tca_cg {

SlabShape slab_shape(int64_t cols, int width_limit) {
  const int64_t limit = std::clamp(width_limit / 32 * 32, 32, 65536);
  SlabShape shape;
  shape.slabs = static_cast<int>(std::max<int64_t>(1, (cols + limit - 1) / limit));
  shape.width = static_cast<int>(
      std::max<int64_t>(32, ((cols + shape.slabs - 1) / shape.slabs + 31) / 32 * 32));
  return shape;
}

namespace {

// Calls visit(slab, first, end) for every run of a row's entries [first, end) in one slab
// (a row's columns ascend, so its entries of a slab are consecutive).
template <class Visit>
void for_each_row_slab(const LocalCsr& matrix, int64_t row, int width, Visit&& visit) {
  const int64_t end = matrix.row_ptr[row + 1];
  for (int64_t k = matrix.row_ptr[row]; k < end;) {
    const int slab = matrix.col[k] / width;
    const int64_t first = k;
    while (k < end && matrix.col[k] / width == slab) ++k;
    visit(slab, first, k);
  }
}

// The packing of one slab's rows into tiles, the same for slab_statistics and
// build_tiled_slabs. Rows come in ascending order, each with its entries of the slab.
struct TilePacker {
  int64_t tiles = 0;
  int64_t used = 0;       // entries of the open tile
  int64_t last_row = -1;  // the open tile's last row
  // Places `count` entries of `row`; returns how many rows without entries are filled with a
  // zero entry before it (since the tile's last row), and sets *opens where the row starts a
  // new tile.
  int64_t place(int64_t row, int64_t count, bool* opens) {
    int64_t fill = tiles > 0 ? row - last_row - 1 : 0;
    *opens = tiles == 0 || fill > kTileGapFill || used + fill + count > kTileEntries;
    if (*opens) {
      ++tiles;
      used = 0;
      fill = 0;
    }
    used += fill + count;
    last_row = row;
    return fill;
  }
};

// Orders the rows of tile t (bank_order.h), in row order: entries [0, filled) hold its rows,
// each starting at a set bit of `starts`, and the zero entries marked in `fills`, which are
// left in place and count as reads of column 0.
void order_tile_rows(TiledSlabs& tiles, int64_t t, const uint8_t* fills, int filled) {
  const size_t base = static_cast<size_t>(t) * kTileEntries;
  auto bit = [&](const uint8_t* bits, int e) {
    return (bits[static_cast<size_t>(t) * kTileLanes + e / 8] >> (e % 8) & 1u) != 0;
  };
  auto value_at = [&](int e) -> double& {
    return tiles.val[base + tile_value_index(e / kTileLaneEntries, e % kTileLaneEntries)];
  };
  BankCounts counts(kTileSlotGroups);
  uint16_t col[kTileEntries];
  double val[kTileEntries];
  int group_of[kTileEntries], order[kTileEntries];
  for (int e = 0; e < filled;) {
    if (bit(fills, e)) {
      uint16_t& zero = counts[tile_slot_group(e)][0];
      zero = std::max<uint16_t>(zero, 1);
      ++e;
      continue;
    }
    int n = 1;
    while (e + n < filled && !bit(tiles.starts.data(), e + n)) ++n;
    for (int i = 0; i < n; ++i) {
      col[i] = tiles.col[base + e + i];
      val[i] = value_at(e + i);
      group_of[i] = tile_slot_group(e + i);
    }
    order_for_banks(col, n, group_of, counts, order);
    for (int i = 0; i < n; ++i) {
      tiles.col[base + e + i] = col[order[i]];
      value_at(e + i) = val[order[i]];
    }
    e += n;
  }
}

}  // namespace

SlabStatistics slab_statistics(const LocalCsr& matrix, SlabShape shape) {
  SlabStatistics out;
  out.rows = matrix.rows;
  out.cols = matrix.cols;
  out.nnz = matrix.nnz();
  out.shape = shape;
  int64_t rows_with_entries = 0;
  // Tiles per slab, packed as build_tiled_slabs packs them.
  std::vector<TilePacker> packers(shape.slabs);
  bool fits = true;
  for (int64_t r = 0; r < matrix.rows; ++r) {
    rows_with_entries += matrix.row_ptr[r + 1] > matrix.row_ptr[r];
    for_each_row_slab(matrix, r, shape.width, [&](int s, int64_t first, int64_t end) {
      const int64_t count = end - first;
      out.max_per_row_slab = std::max(out.max_per_row_slab, count);
      fits = fits && count <= kTileEntries;
      bool opens = false;
      packers[s].place(r, std::min<int64_t>(count, kTileEntries), &opens);
    });
  }
  out.mean_per_row_slab =
      static_cast<double>(out.nnz) /
      static_cast<double>(std::max<int64_t>(1, rows_with_entries) * shape.slabs);
  if (fits) {
    for (const TilePacker& packer : packers) out.tiles += packer.tiles;
  }
  return out;
}

const char* slab_kernel_name(SlabKernel kernel) {
  return kernel == SlabKernel::kTiles ? "tiles" : "rows";
}

SlabKernelChoice choose_slab_kernel(const SlabStatistics& s, int resident_blocks) {
  SlabKernelChoice choice;
  char line[256];
  const double per_block =
      static_cast<double>(s.tiles) / static_cast<double>(std::max(1, resident_blocks));
  std::snprintf(line, sizeof line,
                "%d slab%s of %d columns, %.1f entries per row and slab (most %lld), %.0f tiles "
                "a block",
                s.shape.slabs, s.shape.slabs == 1 ? "" : "s", s.shape.width, s.mean_per_row_slab,
                static_cast<long long>(s.max_per_row_slab), per_block);
  const std::string reason = line;
  const bool fits =
      s.max_per_row_slab <= kTileEntries && s.rows <= std::numeric_limits<int32_t>::max();
  if (!fits) {
    choice.kernel = SlabKernel::kRows;
    choice.reason =
        reason + ": a row's part of a slab exceeds a tile of " + std::to_string(kTileEntries);
  } else if (s.mean_per_row_slab < kTileMeanLimit) {
    choice.kernel = SlabKernel::kTiles;
    std::snprintf(line, sizeof line, ": below %.0f entries, tiles", kTileMeanLimit);
    choice.reason = reason + line;
  } else if (s.mean_per_row_slab < kTileLongMeanLimit && per_block >= kTilesPerBlockLimit) {
    choice.kernel = SlabKernel::kTiles;
    std::snprintf(line, sizeof line, ": below %.0f entries and %.0f or more tiles a block, tiles",
                  kTileLongMeanLimit, kTilesPerBlockLimit);
    choice.reason = reason + line;
  } else {
    choice.kernel = SlabKernel::kRows;
    std::snprintf(line, sizeof line,
                  ": %.0f entries or more, or below %.0f tiles a block, row groups", kTileMeanLimit,
                  kTilesPerBlockLimit);
    choice.reason = reason + line;
  }
  return choice;
}

TiledSlabs build_tiled_slabs(const LocalCsr& matrix, SlabShape shape, int threads) {
  if (matrix.rows > std::numeric_limits<int32_t>::max()) {
    throw std::invalid_argument("tiled slabs: more than 2^31 rows");
  }
  if (shape.width > 65536)
    throw std::invalid_argument("tiled slabs: slabs wider than 65536 columns");
  TiledSlabs out;
  out.shape = shape;
  out.rows = matrix.rows;
  out.cols = matrix.cols;
  out.nnz = matrix.nnz();
  // Pass 1: each slab's tiles (the packing of slab_statistics).
  std::vector<TilePacker> packers(shape.slabs);
  for (int64_t r = 0; r < matrix.rows; ++r) {
    for_each_row_slab(matrix, r, shape.width, [&](int s, int64_t first, int64_t end) {
      const int64_t count = end - first;
      if (count > kTileEntries) {
        throw std::invalid_argument("tiled slabs: row " + std::to_string(r) + " has " +
                                    std::to_string(count) +
                                    " entries in one slab, more than a tile holds");
      }
      bool opens = false;
      packers[s].place(r, count, &opens);
    });
  }
  out.slab_tiles.assign(shape.slabs + 1, 0);
  for (int s = 0; s < shape.slabs; ++s)
    out.slab_tiles[s + 1] = out.slab_tiles[s] + packers[s].tiles;
  out.tiles = out.slab_tiles[shape.slabs];
  const size_t entries = static_cast<size_t>(out.tiles) * kTileEntries;
  out.tile_row.assign(out.tiles, 0);
  out.val.assign(entries, 0.0);  // padding: zero entries without a row start (the last row's)
  out.col.assign(entries, 0);
  out.starts.assign(static_cast<size_t>(out.tiles) * kTileLanes, 0);
  // Pass 2: fill in column order, packed again the same way, with each slab's open tile and
  // its entries so far; the zero entries of rows without entries are marked in
  // `fills` (a bit per entry, as `starts`), each tile's filled entries counted in `filled`.
  struct Open {
    int64_t tile = -1;
    int64_t used = 0;
  };
  std::vector<TilePacker> again(shape.slabs);
  std::vector<Open> open(shape.slabs);
  std::vector<uint8_t> fills(out.starts.size(), 0);
  std::vector<int16_t> filled(out.tiles, 0);
  for (int64_t r = 0; r < matrix.rows; ++r) {
    for_each_row_slab(matrix, r, shape.width, [&](int s, int64_t first, int64_t end) {
      bool opens = false;
      const int64_t fill = again[s].place(r, end - first, &opens);
      int64_t& used = open[s].used;
      if (opens) {
        open[s].tile = open[s].tile < 0 ? out.slab_tiles[s] : open[s].tile + 1;
        used = 0;
        out.tile_row[open[s].tile] = static_cast<int32_t>(r);
      }
      const size_t tile = static_cast<size_t>(open[s].tile);
      auto mark = [&](std::vector<uint8_t>& bits, int64_t e) {
        bits[tile * kTileLanes + e / 8] |= static_cast<uint8_t>(1u << (e % 8));
      };
      for (int64_t k = 0; k < fill; ++k) {  // a zero entry (column 0) for a row without entries
        mark(fills, used);
        mark(out.starts, used++);
      }
      const int32_t slab_first_col = s * shape.width;
      mark(out.starts, used);
      for (int64_t k = first; k < end; ++k, ++used) {
        const int e = static_cast<int>(used);
        out.val[tile * kTileEntries +
                tile_value_index(e / kTileLaneEntries, e % kTileLaneEntries)] = matrix.val[k];
        out.col[tile * kTileEntries + e] = static_cast<uint16_t>(matrix.col[k] - slab_first_col);
      }
      filled[tile] = static_cast<int16_t>(used);
    });
  }
  // Pass 3: each row's entries of a tile in the order bank_order.h chooses, the tiles in
  // parallel (a tile's rows in sequence: each row's order counts the rows before it).
  parallel_ranges(out.tiles, threads, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) order_tile_rows(out, t, fills.data(), filled[t]);
  });
  return out;
}

RowSlabs build_row_slabs(const LocalCsr& matrix, SlabShape shape, int lanes, int threads) {
  RowSlabs out;
  out.shape = shape;
  out.rows = matrix.rows;
  const size_t stride = static_cast<size_t>(matrix.rows) + 1;
  out.base.assign(shape.slabs + 1, 0);
  out.row_ptr.assign(static_cast<size_t>(shape.slabs) * stride, 0);
  for (int64_t r = 0; r < matrix.rows; ++r) {
    for_each_row_slab(matrix, r, shape.width, [&](int s, int64_t first, int64_t end) {
      out.row_ptr[s * stride + r + 1] = static_cast<uint32_t>(end - first);
    });
  }
  for (int s = 0; s < shape.slabs; ++s) {
    uint32_t* offsets = out.row_ptr.data() + s * stride;
    int64_t total = 0;
    for (int64_t r = 1; r <= matrix.rows; ++r) {
      total += offsets[r] + (offsets[r] & 1);
      if (total > UINT32_MAX - 1)
        throw std::invalid_argument("row slabs: a column slab holds more than 2^32 - 2 slots");
      offsets[r] = static_cast<uint32_t>(total);
    }
    out.base[s + 1] = out.base[s] + total;
  }
  out.col.assign(out.base[shape.slabs], 0);
  out.val.assign(out.base[shape.slabs], 0.0);
  parallel_ranges(matrix.rows, threads, [&](int64_t begin, int64_t end, int) {
    RowSlabOrder order(lanes);
    for (int64_t r = begin; r < end; ++r) {
      for_each_row_slab(matrix, r, shape.width, [&](int s, int64_t first, int64_t last) {
        const uint32_t at = out.row_ptr[s * stride + r];
        const int* from = order.place(matrix.col.data() + first, static_cast<int>(last - first),
                                      static_cast<int64_t>(s) * shape.width, at);
        const size_t slot = static_cast<size_t>(out.base[s]) + at;
        for (int64_t i = 0; i < last - first; ++i) {
          out.col[slot + i] = order.col()[from[i]];
          out.val[slot + i] = matrix.val[first + from[i]];
        }
      });
    }
  });
  return out;
}

void tiled_slabs_multiply(const TiledSlabs& tiles, const double* x, double* partial) {
  for (int s = 0; s < tiles.shape.slabs; ++s) {
    const double* xs = x + static_cast<int64_t>(s) * tiles.shape.width;
    double* out = partial + static_cast<int64_t>(s) * tiles.rows;
    for (int64_t t = tiles.slab_tiles[s]; t < tiles.slab_tiles[s + 1]; ++t) {
      const size_t base = static_cast<size_t>(t) * kTileEntries;
      const int64_t row0 = tiles.tile_row[t];
      // Each lane: its head row's sum, its tail row's sum; rows strictly inside are written.
      int head[kTileLanes], tail[kTileLanes];
      double head_sum[kTileLanes], tail_sum[kTileLanes];
      int before = 0;  // row starts in the lanes before
      for (int lane = 0; lane < kTileLanes; ++lane) {
        const unsigned bits = tiles.starts[static_cast<size_t>(t) * kTileLanes + lane];
        int off[kTileLaneEntries];
        double product[kTileLaneEntries];
        for (int j = 0; j < kTileLaneEntries; ++j) {
          const int e = lane * kTileLaneEntries + j;
          off[j] = tile_entry_row(before, bits, j);
          product[j] = tiles.val[base + tile_value_index(lane, j)] * xs[tiles.col[base + e]];
        }
        int current = off[0];
        double sum = 0.0, first_sum = 0.0;
        for (int j = 0; j < kTileLaneEntries; ++j) {
          if (off[j] != current) {
            if (current == off[0]) {
              first_sum = sum;
            } else {
              out[row0 + current] = sum;
            }
            current = off[j];
            sum = 0.0;
          }
          sum += product[j];
        }
        before = tile_entry_row(before, bits, kTileLaneEntries - 1) + 1;
        head[lane] = off[0];
        tail[lane] = off[kTileLaneEntries - 1];
        head_sum[lane] = head[lane] == tail[lane] ? sum : first_sum;
        tail_sum[lane] = sum;
      }
      // Inclusive segmented scan of the tail sums keyed by the tail row (Hillis-Steele, as
      // the warp's shuffles do it: every step reads the values of the step before).
      double scan[kTileLanes];
      for (int lane = 0; lane < kTileLanes; ++lane) scan[lane] = tail_sum[lane];
      for (int d = 1; d < kTileLanes; d *= 2) {
        double next[kTileLanes];
        for (int lane = 0; lane < kTileLanes; ++lane) {
          next[lane] = scan[lane];
          if (lane >= d && tail[lane - d] == tail[lane]) next[lane] = scan[lane] + scan[lane - d];
        }
        for (int lane = 0; lane < kTileLanes; ++lane) scan[lane] = next[lane];
      }
      for (int lane = 0; lane < kTileLanes; ++lane) {
        const bool tail_ends = lane == kTileLanes - 1 || head[lane + 1] != tail[lane];
        if (head[lane] != tail[lane]) {
          const double carry = lane > 0 && tail[lane - 1] == head[lane] ? scan[lane - 1] : 0.0;
          out[row0 + head[lane]] = head_sum[lane] + carry;
          if (tail_ends) out[row0 + tail[lane]] = tail_sum[lane];
        } else if (tail_ends) {
          out[row0 + tail[lane]] = scan[lane];
        }
      }
    }
  }
}

}  // namespace tca_cg
