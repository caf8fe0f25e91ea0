// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "symmetric.h"

#include <stdexcept>

#include "threads.h"

namespace tca_cg {

LocalCsr upper_triangle(const LocalCsr& full) {
  if (full.row_begin != 0 || full.col_begin != 0) {
    throw std::runtime_error("symmetric storage needs the whole matrix on one rank");
  }
  if (full.rows != full.cols) throw std::runtime_error("symmetric storage needs a square block");
  LocalCsr upper;
  upper.rows = full.rows;
  upper.cols = full.cols;
  upper.row_ptr.assign(full.rows + 1, 0);
  for (int64_t r = 0; r < full.rows; ++r) {
    for (int64_t k = full.row_ptr[r]; k < full.row_ptr[r + 1]; ++k) {
      if (full.col[k] >= r) {
        upper.col.push_back(full.col[k]);
        upper.val.push_back(full.val[k]);
      }
    }
    upper.row_ptr[r + 1] = upper.nnz();
  }
  return upper;
}

void symmetric_multiply(const LocalCsr& upper, const double* x, double* y, int threads,
                        std::vector<double>& scratch) {
  const int parts = threads < 1 ? 1 : threads;
  const int64_t n = upper.rows;
  scratch.assign(static_cast<size_t>(parts) * n, 0.0);
  const int64_t* row_ptr = upper.row_ptr.data();
  const int32_t* col = upper.col.data();
  const double* val = upper.val.data();
  // Rows: y_part[r] = sum over the row (U x), y_part[c] += a(r, c) x[r] for c > r (U^T x).
  parallel_ranges(n, parts, [&](int64_t begin, int64_t end, int part) {
    double* own = scratch.data() + static_cast<size_t>(part) * n;
    for (int64_t r = begin; r < end; ++r) {
      double sum = 0.0;
      for (int64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
        sum = sum + val[k] * x[col[k]];
        if (col[k] != r) own[col[k]] += val[k] * x[r];
      }
      own[r] += sum;
    }
  });
  parallel_ranges(n, parts, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      double sum = 0.0;
      for (int part = 0; part < parts; ++part) sum += scratch[static_cast<size_t>(part) * n + i];
      y[i] = sum;
    }
  });
}

}  // namespace tca_cg
