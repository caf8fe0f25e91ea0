// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The order of a row's entries within a slab format, chosen for shared memory's banks.
//
// The slab kernels read x's slab from shared memory, one 8-byte word per entry. The 16 lanes of
// a half-warp that load at once take one pass where their columns fall in distinct bank pairs
// (column mod 16) and one more for each further column on the busiest pair; in a row's
// column order a half-warp of an NPB block meets 4-6 passes. A row's entries may come in any
// order (the kernels add a row's products in the order stored), so the formats place them:
// each slot of a row is read by one known load (its "group"), and each entry goes to a free slot
// whose group already reads its bank pair least often.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace tca_cg {

inline constexpr int kBankPairs = 16;

// Per load group, how many columns it reads on each bank pair so far.
using BankCounts = std::vector<std::array<uint16_t, kBankPairs>>;

// Orders one row's `n` entries (columns `col`, local to the slab) among its `n` slots: slot i is
// read by group group_of[i] (an index into `counts`, which holds what the groups' other slots
// read and gains this row's). On return, order[i] is the entry that slot i receives. Entries on
// the row's most frequent bank pairs are placed first, each to the earliest free slot of the
// group with the fewest columns on its pair (ties: the group with the most free slots).
void order_for_banks(const uint16_t* col, int n, const int* group_of, BankCounts& counts,
                     int* order);

// The rows format's order (gpu_kernels.cu, spmv_slab_kernel): a row whose part of a slab begins
// at offset `begin` is loaded in pairs from the even offset at or before it (the format makes
// it `begin` itself), its pair t by lane t % lanes, so that the `half` = min(lanes, 16) lanes of
// a half-warp read, in one load, the entries of one parity of `half` consecutive pairs. Lanes
// whose slot holds none of the row's entries (padding, or past its end) read column 0.
class RowSlabOrder {
 public:
  explicit RowSlabOrder(int lanes);
  // The row's `n` entries of a slab (columns `columns`, the slab's first being `first_col`) at
  // offsets begin, begin + 1, ...: returns, for each slot i, the entry it receives (valid
  // until the next call); col() holds the entries' columns local to the slab.
  const int* place(const int32_t* columns, int n, int64_t first_col, uint32_t begin);
  const uint16_t* col() const { return col_.data(); }

 private:
  int half_;
  std::vector<uint16_t> col_;
  std::vector<int> group_of_;
  std::vector<int> order_;
  std::vector<int> slots_;  // per group, the row's slots in it
  BankCounts counts_;
};

}  // namespace tca_cg
