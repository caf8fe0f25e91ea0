// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// NPB CG's matrix generator (makea), for one rank's block of the matrix.
//
// The matrix is A = sum over i < n of size_i * v_i v_i^T + (rcond - shift) I, where v_i is a
// random sparse vector (sprnvc: nonzer distinct random positions with random values; vecset:
// position i set to 0.5) and size_i = rcond^(i/n). All vectors come from one random stream, so
// every rank runs the whole stream and keeps only the entries inside its block: no rank holds
// more of the matrix than its block. Entry values, their summation order (outer index, then
// position in the vector) and the ascending columns in every row are NPB's.
#pragma once

#include <array>
#include <cstdint>

#include "csr.h"
#include "npb_class.h"
#include "npb_random.h"

namespace tca_cg {

inline constexpr int kNpbMaxVectorEntries = 22;  // nonzer + 1 for class D

// One random sparse vector: `count` distinct 0-based positions and their values, in the order
// they were drawn.
struct NpbVector {
  int count = 0;
  std::array<int64_t, kNpbMaxVectorEntries> index{};
  std::array<double, kNpbMaxVectorEntries> value{};
};

// The smallest power of two that is at least n, and at least 2 (NPB's nn1).
int64_t npb_power_of_two_at_least(int64_t n);

// sprnvc: draws `nz` distinct positions below n with a value each. Each candidate takes two
// numbers from the stream, the value and then the position int(nn1 * u); positions >= n and
// positions drawn before are rejected.
void npb_sprnvc(NpbRandom& random, int64_t n, int64_t nn1, int nz, NpbVector& vector);

// vecset: sets position `index` to `value`, appending it when it is not in the vector.
void npb_vecset(NpbVector& vector, int64_t index, double value);

// The vectors of the generator in order i = 0, 1, ...: the stream starts with the one number
// NPB's main program draws before makea.
class NpbVectorStream {
 public:
  explicit NpbVectorStream(const NpbClass& cls);
  // Vector i (the next one): sprnvc with nonzer positions, then vecset(i, 0.5).
  void next(NpbVector& vector);
  int64_t next_index() const { return next_index_; }

 private:
  NpbRandom random_;
  int64_t n_;
  int64_t nn1_;
  int nonzer_;
  int64_t next_index_ = 0;
};

// A rectangular block of the matrix, global indices: rows [row_begin, row_end), columns
// [col_begin, col_end); the local CSR has rows_padded rows and cols_padded columns.
struct MatrixBlock {
  int64_t row_begin = 0, row_end = 0;
  int64_t col_begin = 0, col_end = 0;
  int64_t rows_padded = 0, cols_padded = 0;
};

// The block of the class's matrix (two passes over the random stream: count, then fill).
LocalCsr generate_npb_block(const NpbClass& cls, const MatrixBlock& block, int threads);

}  // namespace tca_cg
