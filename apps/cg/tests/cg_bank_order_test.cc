// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The order of a row's entries for shared memory's banks (bank_order.h): every entry placed
// once, a row whose entries allow one pass per load gets it, the tiles of NPB blocks need far
// fewer passes than in column order; the row groups' format holds every entry in whole pairs;
// both formats are the same whatever the threads that build them.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bank_order.h"
#include "csr.h"
#include "layout.h"
#include "npb_class.h"
#include "npb_matrix.h"
#include "slab_format.h"
#include "threads.h"

namespace tca_cg {
namespace {

TEST(BankOrder, EveryEntryGetsOneSlotAndIsCounted) {
  std::mt19937 random(11);
  for (int n : {1, 2, 7, 16, 33, 64, 255}) {
    std::vector<uint16_t> col(n);
    std::vector<int> group_of(n), order(n, -1);
    std::uniform_int_distribution<int> column(0, 65535), group(0, 5);
    for (int i = 0; i < n; ++i) {
      col[i] = static_cast<uint16_t>(column(random));
      group_of[i] = group(random);
    }
    BankCounts counts(6);
    counts[2][3] = 4;  // another row's slots
    order_for_banks(col.data(), n, group_of.data(), counts, order.data());
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> all(n);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all) << n << " entries";
    int total = 0;
    for (const auto& g : counts) total += std::accumulate(g.begin(), g.end(), 0);
    EXPECT_EQ(total, n + 4);
    for (int i = 0; i < n; ++i) {  // each slot's group counts its entry's bank pair
      EXPECT_GE(counts[group_of[i]][col[order[i]] % kBankPairs], 1);
    }
  }
}

TEST(BankOrder, SlotsOutsideTheCountsAreRefused) {
  const uint16_t col[2] = {1, 2};
  const int group_of[2] = {0, 3};
  int order[2];
  BankCounts counts(2);
  EXPECT_THROW(order_for_banks(col, 2, group_of, counts, order), std::out_of_range);
}

// 32 entries, two on each bank pair, in a row of 16 lanes: column order gives each of the two
// loads (even and odd slots) every even or every odd pair twice; the order gives one pass each.
TEST(BankOrder, ARowThatAllowsOnePassGetsIt) {
  std::vector<int32_t> columns(32);
  for (int i = 0; i < 32; ++i) columns[i] = 1000 + i;  // slab's first column 1000
  RowSlabOrder order(16);
  const int* from = order.place(columns.data(), 32, 1000, 0);
  std::array<std::array<int, kBankPairs>, 2> seen{};
  std::set<int> placed;
  for (int i = 0; i < 32; ++i) {
    placed.insert(from[i]);
    ++seen[i % 2][order.col()[from[i]] % kBankPairs];
  }
  EXPECT_EQ(placed.size(), 32u);
  for (const auto& load : seen) {
    for (int pair = 0; pair < kBankPairs; ++pair) EXPECT_EQ(load[pair], 1) << "pair " << pair;
  }
}

TEST(BankOrder, AColumnOutsideTheSlabIsRefused) {
  const int32_t columns[2] = {5, 70000};
  RowSlabOrder order(16);
  EXPECT_THROW(order.place(columns, 2, 0, 0), std::out_of_range);
  EXPECT_THROW(order.place(columns, 1, 6, 0), std::out_of_range);
}

// Passes of every tile load (group) of a tiled block, over all tiles; with `by_column`, as if
// each row's entries stood in column order in the same slots.
double mean_tile_passes(const TiledSlabs& tiles, bool by_column) {
  int64_t passes = 0, loads = 0;
  for (int64_t t = 0; t < tiles.tiles; ++t) {
    const size_t base = static_cast<size_t>(t) * kTileEntries;
    std::vector<uint16_t> col(tiles.col.begin() + base, tiles.col.begin() + base + kTileEntries);
    if (by_column) {  // each row's run of slots (a run starts at a set bit) sorted
      int first = 0;
      for (int e = 1; e <= kTileEntries; ++e) {
        const bool starts =
            e == kTileEntries ||
            (tiles.starts[static_cast<size_t>(t) * kTileLanes + e / 8] >> (e % 8) & 1u);
        if (starts) {
          std::sort(col.begin() + first, col.begin() + e);
          first = e;
        }
      }
    }
    std::vector<std::map<int, std::set<int>>> group(kTileSlotGroups);
    for (int e = 0; e < kTileEntries; ++e)
      group[tile_slot_group(e)][col[e] % kBankPairs].insert(col[e]);
    for (const auto& g : group) {
      size_t most = 1;
      for (const auto& [pair, columns] : g) most = std::max(most, columns.size());
      passes += static_cast<int64_t>(most);
      ++loads;
    }
  }
  return static_cast<double>(passes) / static_cast<double>(std::max<int64_t>(1, loads));
}

TEST(BankOrder, NpbTilesNeedFewerPassesThanColumnOrder) {
  for (const char* name : {"S", "W"}) {
    const NpbClass cls = *find_npb_class(name);
    const Layout layout = make_layout(Partition::kOneD, cls.na, 1, 0);
    const LocalCsr matrix = generate_npb_block(cls, layout.block, 1);
    const TiledSlabs tiles = build_tiled_slabs(matrix, slab_shape(matrix.cols, 2048));
    const double ordered = mean_tile_passes(tiles, false),
                 by_column = mean_tile_passes(tiles, true);
    EXPECT_LT(ordered, 0.7 * by_column) << "class " << name << ": " << ordered << " passes a load, "
                                        << by_column << " in column order";
  }
}

LocalCsr npb_block_of(const char* name, int ranks, int rank) {
  const NpbClass cls = *find_npb_class(name);
  const Layout layout = make_layout(Partition::kOneD, cls.na, ranks, rank);
  return generate_npb_block(cls, layout.block, 1);
}

// The rows format holds each row's entries of a slab once (in some order), padded to whole
// pairs at even offsets with zero entries of column 0.
TEST(BankOrder, RowSlabsHoldEveryEntryInWholePairs) {
  const LocalCsr matrix = npb_block_of("W", 3, 1);
  const SlabShape shape = slab_shape(matrix.cols, 1024);
  ASSERT_GT(shape.slabs, 2);
  const RowSlabs slabs = build_row_slabs(matrix, shape, 16, 2);
  const size_t stride = static_cast<size_t>(matrix.rows) + 1;
  ASSERT_EQ(slabs.row_ptr.size(), static_cast<size_t>(shape.slabs) * stride);
  ASSERT_EQ(slabs.col.size(), static_cast<size_t>(slabs.base[shape.slabs]));
  for (int s = 0; s < shape.slabs; ++s) EXPECT_EQ(slabs.base[s] % 2, 0) << "slab " << s;
  for (int64_t r = 0; r < matrix.rows; ++r) {
    std::multiset<std::pair<int64_t, double>> expected, stored;
    for (int64_t k = matrix.row_ptr[r]; k < matrix.row_ptr[r + 1]; ++k)
      expected.insert({matrix.col[k], matrix.val[k]});
    for (int s = 0; s < shape.slabs; ++s) {
      const uint32_t begin = slabs.row_ptr[s * stride + r], end = slabs.row_ptr[s * stride + r + 1];
      ASSERT_EQ(begin % 2, 0u) << "row " << r << " slab " << s;
      ASSERT_EQ(end % 2, 0u) << "row " << r << " slab " << s;
      int64_t in_slab = 0;
      for (int64_t k = matrix.row_ptr[r]; k < matrix.row_ptr[r + 1]; ++k)
        in_slab += matrix.col[k] / shape.width == s;
      ASSERT_EQ(end - begin, in_slab + (in_slab & 1)) << "row " << r << " slab " << s;
      for (uint32_t i = begin; i < begin + in_slab; ++i) {
        const size_t slot = static_cast<size_t>(slabs.base[s]) + i;
        stored.insert({int64_t{s} * shape.width + slabs.col[slot], slabs.val[slot]});
      }
      if (in_slab & 1) {  // the padding
        const size_t slot = static_cast<size_t>(slabs.base[s]) + end - 1;
        EXPECT_EQ(slabs.col[slot], 0);
        EXPECT_EQ(slabs.val[slot], 0.0);
      }
    }
    ASSERT_EQ(stored, expected) << "row " << r;
  }
}

TEST(BankOrder, TheFormatsAreTheSameForAnyThreadCount) {
  const LocalCsr matrix = npb_block_of("W", 2, 0);
  const SlabShape shape = slab_shape(matrix.cols, 2048);
  const TiledSlabs one = build_tiled_slabs(matrix, shape, 1),
                   three = build_tiled_slabs(matrix, shape, 3);
  EXPECT_EQ(one.col, three.col);
  EXPECT_EQ(one.val, three.val);
  EXPECT_EQ(one.starts, three.starts);
  const RowSlabs rows_one = build_row_slabs(matrix, shape, 16, 1);
  const RowSlabs rows_three = build_row_slabs(matrix, shape, 16, 3);
  EXPECT_EQ(rows_one.row_ptr, rows_three.row_ptr);
  EXPECT_EQ(rows_one.col, rows_three.col);
  EXPECT_EQ(rows_one.val, rows_three.val);
}

TEST(Threads, AnExceptionInAPartIsThrownAfterTheParts) {
  std::vector<int> ran(4, 0);
  EXPECT_THROW(parallel_ranges(100, 4,
                               [&](int64_t, int64_t, int part) {
                                 ran[part] = 1;
                                 if (part == 2) throw std::runtime_error("part 2");
                               }),
               std::runtime_error);
  EXPECT_EQ(std::count(ran.begin(), ran.end(), 1), 4);  // the other parts ran to their end
}

}  // namespace
}  // namespace tca_cg
