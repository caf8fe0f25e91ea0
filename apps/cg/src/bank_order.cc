// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "bank_order.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace tca_cg {

void order_for_banks(const uint16_t* col, int n, const int* group_of, BankCounts& counts,
                     int* order) {
  // The row's groups, each with its slots in order and a cursor at the first free one.
  std::vector<int> groups;
  for (int i = 0; i < n; ++i) {
    if (group_of[i] < 0 || static_cast<size_t>(group_of[i]) >= counts.size())
      throw std::out_of_range("order_for_banks: a slot's group is outside the counts");
    if (std::find(groups.begin(), groups.end(), group_of[i]) == groups.end())
      groups.push_back(group_of[i]);
  }
  std::vector<std::vector<int>> slots(groups.size());
  for (int i = 0; i < n; ++i) {
    const size_t g =
        static_cast<size_t>(std::find(groups.begin(), groups.end(), group_of[i]) - groups.begin());
    slots[g].push_back(i);
  }
  std::vector<size_t> used(groups.size(), 0);
  // Entries by their bank pair's frequency in the row (most first), then in column order.
  std::array<int, kBankPairs> in_row{};
  for (int e = 0; e < n; ++e) ++in_row[col[e] % kBankPairs];
  std::vector<int> entries(n);
  for (int e = 0; e < n; ++e) entries[e] = e;
  std::stable_sort(entries.begin(), entries.end(), [&](int a, int b) {
    const int pa = col[a] % kBankPairs, pb = col[b] % kBankPairs;
    return in_row[pa] != in_row[pb] ? in_row[pa] > in_row[pb] : pa < pb;
  });
  for (int e : entries) {
    const int pair = col[e] % kBankPairs;
    size_t best = groups.size();
    for (size_t g = 0; g < groups.size(); ++g) {
      if (used[g] == slots[g].size()) continue;
      if (best == groups.size()) {
        best = g;
        continue;
      }
      const int load = counts[groups[g]][pair], best_load = counts[groups[best]][pair];
      const size_t free = slots[g].size() - used[g], best_free = slots[best].size() - used[best];
      if (load < best_load || (load == best_load && free > best_free)) best = g;
    }
    order[slots[best][used[best]++]] = e;
    ++counts[groups[best]][pair];
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
  counts_.assign(groups, {});
  // A group with fewer of the row's slots than lanes: the others read column 0.
  std::vector<int> real(groups, 0);
  for (int i = 0; i < n; ++i) ++real[group_of_[i]];
  for (int g = 0; g < groups; ++g) counts_[g][0] = real[g] < half_ ? 1 : 0;
  order_for_banks(col_.data(), n, group_of_.data(), counts_, order_.data());
  return order_.data();
}

int bank_passes(const std::array<uint16_t, kBankPairs>& counts) {
  return std::max(1, static_cast<int>(*std::max_element(counts.begin(), counts.end())));
}

}  // namespace tca_cg
