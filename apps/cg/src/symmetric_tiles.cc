// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "symmetric_tiles.h"

#include <algorithm>
#include <stdexcept>

namespace tca_cg {

TileSegments tile_segments(const std::vector<int64_t>& slab_tiles, int blocks) {
  if (blocks < 1) throw std::invalid_argument("tile_segments: blocks must be at least 1");
  if (slab_tiles.empty() || !std::is_sorted(slab_tiles.begin(), slab_tiles.end()) ||
      slab_tiles.front() != 0)
    throw std::invalid_argument("tile_segments: slab_tiles must ascend from 0");
  const int slabs = static_cast<int>(slab_tiles.size()) - 1;
  const int64_t tiles = slab_tiles.back();
  TileSegments out;
  out.blocks = blocks;
  out.first_block.assign(slabs, 0);
  out.first_segment.assign(slabs + 1, 0);
  for (int s = 0; s < slabs; ++s) {
    int first = -1, last = -1;
    for (int b = 0; b < blocks; ++b) {  // block b: tiles [T b / G, T (b + 1) / G)
      const int64_t begin = tiles * b / blocks, end = tiles * (b + 1) / blocks;
      if (begin < end && slab_tiles[s] < slab_tiles[s + 1] && begin < slab_tiles[s + 1] &&
          end > slab_tiles[s]) {
        if (first < 0) first = b;
        last = b;
      }
    }
    out.first_block[s] = std::max(first, 0);
    out.first_segment[s + 1] = out.first_segment[s] + (first < 0 ? 0 : last - first + 1);
  }
  return out;
}

int symmetric_width_limit(int shared_limit) {
  const int width = (shared_limit - static_cast<int>(sizeof(uint64_t))) /
                    static_cast<int>(2 * sizeof(double)) / 32 * 32;
  return std::clamp(width, 32, 65536);
}

void tiled_slabs_scatter(const TiledSlabs& tiles, const TileSegments& segments, const double* x,
                         double* sums) {
  const int width = tiles.shape.width;
  std::fill(sums, sums + segments.segments() * width, 0.0);
  for (int b = 0; b < segments.blocks; ++b) {
    const int64_t begin = tiles.tiles * b / segments.blocks;
    const int64_t end = tiles.tiles * (b + 1) / segments.blocks;
    for (int64_t t = begin; t < end; ++t) {
      int s = 0;
      while (tiles.slab_tiles[s + 1] <= t) ++s;
      const int64_t first_col = static_cast<int64_t>(s) * width;
      double* out = sums + (segments.first_segment[s] + b - segments.first_block[s]) * width;
      int before = 0;
      for (int lane = 0; lane < kTileLanes; ++lane) {
        const unsigned bits = tiles.starts[static_cast<size_t>(t) * kTileLanes + lane];
        for (int j = 0; j < kTileLaneEntries; ++j) {
          const size_t base = static_cast<size_t>(t) * kTileEntries;
          const int c = tiles.col[base + lane * kTileLaneEntries + j];
          const int64_t row = tiles.tile_row[t] + tile_entry_row(before, bits, j);
          if (first_col + c != row) out[c] += tiles.val[base + tile_value_index(lane, j)] * x[row];
        }
        before = tile_entry_row(before, bits, kTileLaneEntries - 1) + 1;
      }
    }
  }
}

void symmetric_tiles_sum(const TiledSlabs& tiles, const TileSegments& segments,
                         const double* partial, const double* sums, double* y) {
  const int width = tiles.shape.width;
  for (int64_t i = 0; i < tiles.rows; ++i) {
    const int own = static_cast<int>(i / width);
    double s = 0.0;
    for (int k = own; k < tiles.shape.slabs; ++k) s += partial[k * tiles.rows + i];
    for (int64_t g = segments.first_segment[own]; g < segments.first_segment[own + 1]; ++g)
      s += sums[g * width + i - static_cast<int64_t>(own) * width];
    y[i] = s;
  }
}

}  // namespace tca_cg
