// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Symmetric storage: the upper triangle of NPB's matrix, the product it gives against the full
// matrix's, and NPB's power iteration on it; planted errors that the checks must catch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "csr.h"
#include "layout.h"
#include "npb_class.h"
#include "npb_matrix.h"
#include "power_iteration.h"
#include "symmetric.h"

namespace tca_cg {
namespace {

LocalCsr whole_class(const char* name) {
  const NpbClass cls = *find_npb_class(name);
  return generate_npb_block(cls, MatrixBlock{0, cls.na, 0, cls.na, cls.na, cls.na}, 1);
}

std::vector<double> test_vector(int64_t n) {
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = 1.0 + std::sin(0.37 * static_cast<double>(i));
  return x;
}

// max |a - b| / max |b|
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff / scale;
}

TEST(SymmetricStorage, UpperTriangleHoldsTheDiagonalAndAbove) {
  const LocalCsr full = whole_class("S");
  const LocalCsr upper = upper_triangle(full);
  int64_t diagonal = 0;
  for (int64_t r = 0; r < upper.rows; ++r) {
    for (int64_t k = upper.row_ptr[r]; k < upper.row_ptr[r + 1]; ++k) {
      ASSERT_GE(upper.col[k], r);
      if (upper.col[k] == r) ++diagonal;
    }
  }
  EXPECT_EQ(diagonal, full.rows);
  // The pattern is symmetric: the strictly upper entries are half of the off-diagonal ones.
  EXPECT_EQ(2 * (upper.nnz() - diagonal), full.nnz() - diagonal);
}

TEST(SymmetricStorage, ProductMatchesTheFullMatrixOnEveryThreadCount) {
  for (const char* name : {"S", "W"}) {
    const LocalCsr full = whole_class(name);
    const LocalCsr upper = upper_triangle(full);
    const std::vector<double> x = test_vector(full.rows);
    std::vector<double> expected(full.rows), y(full.rows), again(full.rows), scratch;
    csr_multiply_reference(full, x.data(), expected.data());
    for (int threads : {1, 3, 4}) {
      symmetric_multiply(upper, x.data(), y.data(), threads, scratch);
      EXPECT_LT(relative_difference(y, expected), 1e-13) << name << ", " << threads << " threads";
      symmetric_multiply(upper, x.data(), again.data(), threads, scratch);
      EXPECT_EQ(y, again) << "the same bits on every run";
    }
  }
}

// A wrong entry in the upper triangle shows in both of its rows of the product.
TEST(SymmetricStorage, PlantedWrongEntryIsCaught) {
  const LocalCsr full = whole_class("S");
  LocalCsr upper = upper_triangle(full);
  const int64_t row = 100;
  const int64_t k = upper.row_ptr[row + 1] - 1;  // the row's last entry: above the diagonal
  ASSERT_GT(upper.col[k], row);
  upper.val[k] *= 1.0 + 1e-6;
  const std::vector<double> x = test_vector(full.rows);
  std::vector<double> expected(full.rows), y(full.rows), scratch;
  csr_multiply_reference(full, x.data(), expected.data());
  symmetric_multiply(upper, x.data(), y.data(), 2, scratch);
  EXPECT_GT(relative_difference(y, expected), 1e-13);
  EXPECT_GT(std::fabs(y[upper.col[k]] - expected[upper.col[k]]), 0.0);
}

TEST(SymmetricStorage, PowerIterationVerifiesOnClassesSAndW) {
  for (const char* name : {"S", "W"}) {
    const NpbClass cls = *find_npb_class(name);
    const LocalCsr upper = upper_triangle(whole_class(name));
    std::vector<double> scratch;
    const double zeta = power_iteration_zeta(
        cls, [&](const double* p, double* q) { symmetric_multiply(upper, p, q, 3, scratch); });
    EXPECT_TRUE(npb_verified(cls, zeta)) << name << ": zeta " << zeta;
  }
}

// Verification is sensitive enough to see a wrong diagonal entry of the stored triangle.
TEST(SymmetricStorage, PlantedWrongDiagonalFailsVerification) {
  const NpbClass cls = *find_npb_class("S");
  LocalCsr upper = upper_triangle(whole_class("S"));
  for (int64_t r = 0; r < upper.rows; r += 7)
    upper.val[upper.row_ptr[r]] += 1e-3;  // a row's first entry: its diagonal
  std::vector<double> scratch;
  const double zeta = power_iteration_zeta(
      cls, [&](const double* p, double* q) { symmetric_multiply(upper, p, q, 2, scratch); });
  EXPECT_FALSE(npb_verified(cls, zeta)) << "zeta " << zeta;
}

}  // namespace
}  // namespace tca_cg
