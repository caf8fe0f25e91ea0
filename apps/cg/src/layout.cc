// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "layout.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tca_cg {
namespace {

int integer_square_root(int value) {
  int root = static_cast<int>(std::lround(std::sqrt(static_cast<double>(value))));
  while (root > 0 && root * root > value) --root;
  while ((root + 1) * (root + 1) <= value) ++root;
  return root;
}

}  // namespace

const char* partition_name(Partition partition) {
  return partition == Partition::kOneD ? "1d" : "2d";
}

int64_t Layout::own_count() const { return std::clamp<int64_t>(n - own_begin, 0, piece); }

bool partition_fits(Partition partition, int ranks, std::string* reason) {
  if (ranks < 1) {
    if (reason) *reason = "no ranks";
    return false;
  }
  if (partition == Partition::kTwoD) {
    const int side = integer_square_root(ranks);
    if (side * side != ranks) {
      if (reason) {
        *reason = "--partition 2d needs a square number of ranks (1, 4, 9, 16, ...); got " +
                  std::to_string(ranks);
      }
      return false;
    }
  }
  return true;
}

Layout make_layout(Partition partition, int64_t n, int ranks, int rank) {
  std::string reason;
  if (!partition_fits(partition, ranks, &reason)) throw std::invalid_argument(reason);
  if (n < 1) throw std::invalid_argument("make_layout: empty matrix");
  Layout layout;
  layout.partition = partition;
  layout.n = n;
  layout.ranks = ranks;
  layout.rank = rank;
  layout.piece = (n + ranks - 1) / ranks;
  MatrixBlock& block = layout.block;
  if (partition == Partition::kOneD) {
    layout.own_begin = rank * layout.piece;
    block.row_begin = std::min(n, layout.own_begin);
    block.row_end = std::min(n, layout.own_begin + layout.piece);
    block.col_begin = 0;
    block.col_end = n;
    block.rows_padded = layout.piece;
    block.cols_padded = layout.piece * ranks;
  } else {
    layout.grid = integer_square_root(ranks);
    layout.grid_row = rank / layout.grid;
    layout.grid_col = rank % layout.grid;
    const int64_t side = layout.piece * layout.grid;  // B
    layout.own_begin = layout.grid_row * side + layout.grid_col * layout.piece;
    block.row_begin = std::min(n, layout.grid_row * side);
    block.row_end = std::min(n, (layout.grid_row + 1) * side);
    block.col_begin = std::min(n, layout.grid_col * side);
    block.col_end = std::min(n, (layout.grid_col + 1) * side);
    block.rows_padded = side;
    block.cols_padded = side;
  }
  return layout;
}

}  // namespace tca_cg
