// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A rank's part of a sparse matrix in compressed sparse row form, with local indices: row r is
// global row row_begin + r, column c is global column col_begin + c. Rows and columns may be
// padded past the matrix's end (padding rows are empty, padding columns never referenced).
#pragma once

#include <cstdint>
#include <vector>

namespace tca_cg {

struct LocalCsr {
  int64_t rows = 0;              // local rows, padding included
  int64_t cols = 0;              // local column space, padding included
  int64_t row_begin = 0;         // global index of local row 0
  int64_t col_begin = 0;         // global index of local column 0
  std::vector<int64_t> row_ptr;  // rows + 1 offsets
  std::vector<int32_t> col;      // local column of each nonzero, ascending within a row
  std::vector<double> val;

  int64_t nnz() const { return static_cast<int64_t>(col.size()); }
};

// One nonzero with local row and column.
struct LocalEntry {
  int64_t row;
  int32_t col;
  double val;
};

// Builds the CSR form from entries in any order: sorted by row, then column, duplicates summed
// in the order they appear in `entries` (the vector is consumed).
LocalCsr csr_from_entries(std::vector<LocalEntry> entries, int64_t rows, int64_t cols,
                          int64_t row_begin, int64_t col_begin);

// Sorts every row of `csr` by column (stable: equal columns keep their order) and sums equal
// columns in that order, compacting the arrays. `threads` rows are processed in parallel.
void csr_sort_and_merge_rows(LocalCsr& csr, int threads);

// y[r] = sum over the row of val * x[col], r < rows, in the row's order.
void csr_multiply_reference(const LocalCsr& csr, const double* x, double* y);

}  // namespace tca_cg
