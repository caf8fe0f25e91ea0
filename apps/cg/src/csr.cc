// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "csr.h"

#include <algorithm>
#include <numeric>

#include "threads.h"

namespace tca_cg {
namespace {

// Sorts [first, last) of the row by column keeping the order of equal columns, sums them,
// and returns how many distinct columns remain at the front.
int64_t merge_row(int32_t* col, double* val, int64_t count, std::vector<int64_t>& order,
                  std::vector<int32_t>& col_scratch, std::vector<double>& val_scratch) {
  order.resize(count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [col](int64_t a, int64_t b) { return col[a] < col[b]; });
  col_scratch.clear();
  val_scratch.clear();
  for (int64_t k : order) {
    if (!col_scratch.empty() && col_scratch.back() == col[k]) {
      val_scratch.back() = val_scratch.back() + val[k];
    } else {
      col_scratch.push_back(col[k]);
      val_scratch.push_back(val[k]);
    }
  }
  std::copy(col_scratch.begin(), col_scratch.end(), col);
  std::copy(val_scratch.begin(), val_scratch.end(), val);
  return static_cast<int64_t>(col_scratch.size());
}

}  // namespace

void csr_sort_and_merge_rows(LocalCsr& csr, int threads) {
  std::vector<int64_t> kept(csr.rows, 0);
  parallel_ranges(csr.rows, threads, [&](int64_t begin, int64_t end, int) {
    std::vector<int64_t> order;
    std::vector<int32_t> col_scratch;
    std::vector<double> val_scratch;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t first = csr.row_ptr[r];
      kept[r] = merge_row(csr.col.data() + first, csr.val.data() + first,
                          csr.row_ptr[r + 1] - first, order, col_scratch, val_scratch);
    }
  });
  // Compact the rows in order (each row moves towards the front, never past another's data).
  int64_t out = 0;
  for (int64_t r = 0; r < csr.rows; ++r) {
    const int64_t first = csr.row_ptr[r];
    if (out != first) {
      std::copy(csr.col.begin() + first, csr.col.begin() + first + kept[r], csr.col.begin() + out);
      std::copy(csr.val.begin() + first, csr.val.begin() + first + kept[r], csr.val.begin() + out);
    }
    csr.row_ptr[r] = out;
    out += kept[r];
  }
  csr.row_ptr[csr.rows] = out;
  csr.col.resize(out);
  csr.val.resize(out);
  csr.col.shrink_to_fit();
  csr.val.shrink_to_fit();
}

LocalCsr csr_from_entries(std::vector<LocalEntry> entries, int64_t rows, int64_t cols,
                          int64_t row_begin, int64_t col_begin) {
  LocalCsr csr;
  csr.rows = rows;
  csr.cols = cols;
  csr.row_begin = row_begin;
  csr.col_begin = col_begin;
  csr.row_ptr.assign(rows + 1, 0);
  for (const LocalEntry& e : entries) ++csr.row_ptr[e.row + 1];
  std::partial_sum(csr.row_ptr.begin(), csr.row_ptr.end(), csr.row_ptr.begin());
  csr.col.resize(entries.size());
  csr.val.resize(entries.size());
  std::vector<int64_t> next(csr.row_ptr.begin(), csr.row_ptr.end() - 1);
  for (const LocalEntry& e : entries) {
    const int64_t k = next[e.row]++;
    csr.col[k] = e.col;
    csr.val[k] = e.val;
  }
  entries.clear();
  entries.shrink_to_fit();
  csr_sort_and_merge_rows(csr, 1);
  return csr;
}

void csr_multiply_reference(const LocalCsr& csr, const double* x, double* y) {
  for (int64_t r = 0; r < csr.rows; ++r) {
    double sum = 0.0;
    for (int64_t k = csr.row_ptr[r]; k < csr.row_ptr[r + 1]; ++k)
      sum = sum + csr.val[k] * x[csr.col[k]];
    y[r] = sum;
  }
}

}  // namespace tca_cg
