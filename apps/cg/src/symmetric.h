// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Symmetric storage of a matrix held whole by one rank: the upper triangle with the diagonal
// (CSR), and y = U x + U^T x - D x computed from it, reading each stored entry once.
#pragma once

#include <vector>

#include "csr.h"

namespace tca_cg {

// The entries of `full` on or above the diagonal (global column >= global row), in row order.
// `full` must cover the whole matrix (row_begin == col_begin == 0). The lower triangle is
// dropped without a look: the caller's matrix is symmetric (NPB's only to rounding).
LocalCsr upper_triangle(const LocalCsr& full);

// y = A x for A = U + U^T - D, U = upper_triangle(A). Each of `threads` parts of the rows adds
// its transposed terms into its own copy of y (`scratch`, threads x rows, resized here); the
// copies are summed in part order, so the result is the same on every run.
void symmetric_multiply(const LocalCsr& upper, const double* x, double* y, int threads,
                        std::vector<double>& scratch);

}  // namespace tca_cg
