// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// How the matrix and the vectors are spread over the ranks.
//
// Every vector is cut into P pieces of m = ceil(n / P) elements (the last ones padded with
// zeros); rank r owns piece r of every vector (x, z, p, q, r), so dot products are a local sum
// and one allreduce.
//
// 1d: rank r holds rows [r*m, (r+1)*m) of A, all columns. The SpMV needs the whole p: an
//     allgather of the pieces, in place, into p_full (P*m elements; p is p_full's piece r).
// 2d: P = s*s ranks in an s x s grid, rank (i, j) = i*s + j. Row and column blocks have
//     B = s*m elements; rank (i, j) holds block A(i, j) (rows of block i, columns of block j)
//     and owns piece j of row block i (global elements i*B + j*m ...). The SpMV of A(i, j)
//     needs column block j: pieces (j, 0..s-1), owned by grid row j. Rank (i, j) sends its
//     piece to the ranks of grid column i, which keep it at offset j*m of their column block.
//     The partial products w = A(i, j) p_j (B elements) are summed along grid row i, rank
//     (i, j) receiving piece j of the sum. Each rank moves about 2n/s elements per SpMV.
#pragma once

#include <cstdint>
#include <string>

#include "npb_matrix.h"

namespace tca_cg {

enum class Partition { kOneD, kTwoD };

const char* partition_name(Partition partition);

struct Layout {
  Partition partition = Partition::kOneD;
  int64_t n = 0;  // global rows and columns
  int ranks = 1;
  int rank = 0;
  int grid = 1;           // s: 2d grid side (1 for 1d)
  int grid_row = 0;       // i
  int grid_col = 0;       // j
  int64_t piece = 0;      // m: elements of one rank's piece of a vector (padded)
  int64_t own_begin = 0;  // global index of this rank's piece
  MatrixBlock block;      // this rank's block of A (rows, columns, padded extents)

  // Elements of this rank's piece that lie inside the matrix (the rest is padding).
  int64_t own_count() const;
  // Rank of grid position (row, col).
  int rank_at(int row, int col) const { return row * grid + col; }
};

// Whether `ranks` can run `partition` (2d: a perfect square); *reason says why not.
bool partition_fits(Partition partition, int ranks, std::string* reason);
// The layout of rank `rank`; partition_fits must hold.
Layout make_layout(Partition partition, int64_t n, int ranks, int rank);

}  // namespace tca_cg
