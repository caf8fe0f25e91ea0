// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "bank_order.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace tca_cg {

void order_for_banks(const uint16_t* col, int n, const int* group_of, BankCounts& counts,
                     int* order) {
  const int groups = static_cast<int>(counts.size());
  // Scratch kept by the thread: the formats call this once per row and slab.
  thread_local std::vector<int> first, free_slots, slots, row_groups, entries;
  // Each group's slots in order (first[g] .. first[g + 1] in `slots`), and the row's groups in
  // the order of their first slot.
  first.assign(groups + 1, 0);
  row_groups.clear();
  for (int i = 0; i < n; ++i) {
    const int g = group_of[i];
    if (g < 0 || g >= groups)
      throw std::out_of_range("order_for_banks: a slot's group is outside the counts");
    if (first[g + 1]++ == 0) row_groups.push_back(g);
  }
  for (int g = 0; g < groups; ++g) first[g + 1] += first[g];
  free_slots.assign(groups, 0);  // counted as the slots are listed: then all of them free
  slots.resize(n);
  for (int i = 0; i < n; ++i) slots[first[group_of[i]] + free_slots[group_of[i]]++] = i;
  // Entries by their bank pair's frequency in the row (most first; ties: the lower pair), each
  // pair's entries in their order.
  std::array<int, kBankPairs> in_row{}, pairs{}, at{};
  for (int e = 0; e < n; ++e) ++in_row[col[e] % kBankPairs];
  for (int p = 0; p < kBankPairs; ++p) {  // an insertion sort: stable, and no buffer
    int k = p;
    for (; k > 0 && in_row[pairs[k - 1]] < in_row[p]; --k) pairs[k] = pairs[k - 1];
    pairs[k] = p;
  }
  for (int k = 0, sum = 0; k < kBankPairs; ++k) {
    at[pairs[k]] = sum;
    sum += in_row[pairs[k]];
  }
  entries.resize(n);
  for (int e = 0; e < n; ++e) entries[at[col[e] % kBankPairs]++] = e;
  for (int e : entries) {
    const int pair = col[e] % kBankPairs;
    int best = -1, best_load = 0, best_free = 0;
    for (int g : row_groups) {  // the groups with free slots, in their order
      const int load = counts[g][pair];
      if (best < 0 || load < best_load || (load == best_load && free_slots[g] > best_free)) {
        best = g;
        best_load = load;
        best_free = free_slots[g];
      }
    }
    order[slots[first[best + 1] - free_slots[best]--]] = e;  // the group's earliest free slot
    ++counts[best][pair];
    if (free_slots[best] == 0)
      row_groups.erase(std::find(row_groups.begin(), row_groups.end(), best));
  }
}

RowSlabOrder::RowSlabOrder(int lanes) : half_(std::clamp(lanes, 1, 16)) {}

const int* RowSlabOrder::place(const int32_t* columns, int n, int64_t first_col, uint32_t begin) {
  col_.resize(n);
  group_of_.resize(n);
  order_.resize(n);
  for (int i = 0; i < n; ++i) {
    const int64_t local = columns[i] - first_col;
    if (local < 0 || local > UINT16_MAX)
      throw std::out_of_range("RowSlabOrder: a column outside the slab");
    col_[i] = static_cast<uint16_t>(local);
  }
  // Group of slot i: (pair of the row / half, parity); the row's pairs begin at begin / 2.
  const uint32_t first_pair = begin / 2;
  int groups = 0;
  for (int i = 0; i < n; ++i) {
    const uint32_t p = begin + static_cast<uint32_t>(i);
    group_of_[i] = static_cast<int>((p / 2 - first_pair) / half_) * 2 + static_cast<int>(p & 1);
    groups = std::max(groups, group_of_[i] + 1);
  }
  // A group with fewer of the row's slots than lanes: the others read column 0.
  slots_.assign(groups, 0);
  for (int i = 0; i < n; ++i) ++slots_[group_of_[i]];
  counts_.assign(groups, {});
  for (int g = 0; g < groups; ++g) counts_[g][0] = slots_[g] < half_ ? 1 : 0;
  order_for_banks(col_.data(), n, group_of_.data(), counts_, order_.data());
  return order_.data();
}

}  // namespace tca_cg
