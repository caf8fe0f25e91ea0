// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Matrix Market input: coordinate matrices (real, integer or pattern; general or symmetric
// storage) read in parts, and right-hand-side vectors.
//
// Every rank scans the whole file but keeps only the entries of its own block, so no rank
// holds the whole matrix. Malformed input throws MtxError whose message names the file and the
// line ("m.mtx:17: ...").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "csr.h"
#include "npb_matrix.h"

namespace tca_cg {

class MtxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class MtxField { kReal, kInteger, kPattern };

struct MtxInfo {
  bool coordinate = true;  // false: array (dense) format
  MtxField field = MtxField::kReal;
  bool symmetric = false;  // symmetric storage: entries on and below the diagonal only
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t entries = 0;  // stored entries (coordinate) or rows*cols (array)
};

const char* mtx_field_name(MtxField field);

// Reads and checks the banner and the size line.
MtxInfo read_mtx_info(const std::string& path);

// Reads every stored entry of a coordinate matrix in file order: visit(row, col, value) with
// 0-based indices (pattern entries have value 1). Checks every line; throws MtxError.
void scan_mtx_entries(const std::string& path,
                      const std::function<void(int64_t, int64_t, double)>& visit);

// A rank's block of a square coordinate matrix. Symmetric storage is mirrored. With general
// storage, `transposed` (if not null) receives the block of A^T, for check_block_symmetry.
LocalCsr read_mtx_block(const std::string& path, const MtxInfo& info, const MatrixBlock& block,
                        LocalCsr* transposed);

// The first difference between a block of A and the same block of A^T, as a message with
// 1-based global indices; nullopt when they agree (values to 1e-12 relative).
std::optional<std::string> check_block_symmetry(const LocalCsr& block, const LocalCsr& transposed);

// For each row of the block whose diagonal lies inside the block: a message for the first
// row whose diagonal entry is missing, zero or negative (1-based); nullopt when all are
// positive. `rows_in_matrix` (n) bounds the real rows.
std::optional<std::string> check_block_diagonal(const LocalCsr& block, int64_t rows_in_matrix);

// Elements [begin, begin + count) of a right-hand side of n elements (array format n x 1,
// or coordinate n x 1, missing entries zero); elements past n are zero.
std::vector<double> read_mtx_vector_piece(const std::string& path, int64_t n, int64_t begin,
                                          int64_t count);

}  // namespace tca_cg
