// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "npb_matrix.h"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace tca_cg {

int64_t npb_power_of_two_at_least(int64_t n) {
  int64_t power = 1;
  do {
    power *= 2;  // NPB doubles before it compares: n = 1 gives 2
  } while (power < n);
  return power;
}

void npb_sprnvc(NpbRandom& random, int64_t n, int64_t nn1, int nz, NpbVector& vector) {
  vector.count = 0;
  while (vector.count < nz) {
    const double value = random.next();
    const double where = random.next();
    // nn1 is a power of two and `where` a multiple of 2^-46: the product is exact.
    const int64_t position = static_cast<int64_t>(static_cast<double>(nn1) * where);
    if (position >= n) continue;
    bool drawn_before = false;
    for (int k = 0; k < vector.count; ++k)
      drawn_before = drawn_before || vector.index[k] == position;
    if (drawn_before) continue;
    vector.index[vector.count] = position;
    vector.value[vector.count] = value;
    ++vector.count;
  }
}

void npb_vecset(NpbVector& vector, int64_t index, double value) {
  for (int k = 0; k < vector.count; ++k) {
    if (vector.index[k] == index) {
      vector.value[k] = value;
      return;
    }
  }
  vector.index[vector.count] = index;
  vector.value[vector.count] = value;
  ++vector.count;
}

NpbVectorStream::NpbVectorStream(const NpbClass& cls)
    : n_(cls.na), nn1_(npb_power_of_two_at_least(cls.na)), nonzer_(cls.nonzer) {
  if (cls.nonzer + 1 > kNpbMaxVectorEntries) {
    throw std::invalid_argument("NPB class with more than " +
                                std::to_string(kNpbMaxVectorEntries - 1) + " nonzeros per vector");
  }
  random_.next();  // NPB's main program draws one number (its first zeta) before makea.
}

void NpbVectorStream::next(NpbVector& vector) {
  npb_sprnvc(random_, n_, nn1_, nonzer_, vector);
  npb_vecset(vector, next_index_, 0.5);
  ++next_index_;
}

namespace {

// Calls emit(local_row, local_col, value) for every entry of the block, in NPB's order: outer
// index i, then the vector's position a (the row), then position b (the column). count_only
// skips the values: emit(local_row, count) once per row and vector instead.
template <bool kCountOnly, class Emit>
void for_each_block_entry(const NpbClass& cls, const MatrixBlock& block, Emit&& emit) {
  NpbVectorStream stream(cls);
  NpbVector vector;
  const double ratio = std::pow(kNpbRcond, 1.0 / static_cast<double>(cls.na));
  double size = 1.0;
  for (int64_t i = 0; i < cls.na; ++i) {
    stream.next(vector);
    int in_columns = 0;
    for (int b = 0; b < vector.count; ++b) {
      in_columns += vector.index[b] >= block.col_begin && vector.index[b] < block.col_end;
    }
    for (int a = 0; a < vector.count && in_columns > 0; ++a) {
      const int64_t row = vector.index[a];
      if (row < block.row_begin || row >= block.row_end) continue;
      if constexpr (kCountOnly) {
        emit(row - block.row_begin, in_columns);
      } else {
        const double scale = size * vector.value[a];
        for (int b = 0; b < vector.count; ++b) {
          const int64_t col = vector.index[b];
          if (col < block.col_begin || col >= block.col_end) continue;
          double value = vector.value[b] * scale;
          if (row == i && col == i) value = value + kNpbRcond - cls.shift;
          emit(row - block.row_begin, col - block.col_begin, value);
        }
      }
    }
    size = size * ratio;
  }
}

}  // namespace

LocalCsr generate_npb_block(const NpbClass& cls, const MatrixBlock& block, int threads) {
  if (block.rows_padded < block.row_end - block.row_begin ||
      block.cols_padded < block.col_end - block.col_begin) {
    throw std::invalid_argument("generate_npb_block: padded extent smaller than the block");
  }
  LocalCsr csr;
  csr.rows = block.rows_padded;
  csr.cols = block.cols_padded;
  csr.row_begin = block.row_begin;
  csr.col_begin = block.col_begin;
  csr.row_ptr.assign(csr.rows + 1, 0);
  for_each_block_entry<true>(cls, block,
                             [&](int64_t row, int count) { csr.row_ptr[row + 1] += count; });
  std::partial_sum(csr.row_ptr.begin(), csr.row_ptr.end(), csr.row_ptr.begin());
  const int64_t entries = csr.row_ptr[csr.rows];
  csr.col.resize(entries);
  csr.val.resize(entries);
  std::vector<int64_t> next(csr.row_ptr.begin(), csr.row_ptr.end() - 1);
  for_each_block_entry<false>(cls, block, [&](int64_t row, int64_t col, double value) {
    const int64_t k = next[row]++;
    csr.col[k] = static_cast<int32_t>(col);
    csr.val[k] = value;
  });
  csr_sort_and_merge_rows(csr, threads);
  return csr;
}

}  // namespace tca_cg
