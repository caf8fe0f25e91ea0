// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Unit tests of tca-cg's parts that need no MPI or device: NPB's random generator and matrix
// generator, layouts, CSR assembly and the Matrix Market reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "csr.h"
#include "kernel_times.h"
#include "layout.h"
#include "mtx_reader.h"
#include "npb_class.h"
#include "npb_matrix.h"
#include "npb_random.h"
#include "power_iteration.h"

namespace tca_cg {
namespace {

// NPB's randlc as its specification states it: doubles split into 23-bit halves.
double reference_randlc(double* x, double a) {
  const double r23 = std::ldexp(1.0, -23), r46 = r23 * r23;
  const double t23 = std::ldexp(1.0, 23), t46 = t23 * t23;
  const double a1 = std::floor(r23 * a), a2 = a - t23 * a1;
  const double x1 = std::floor(r23 * *x), x2 = *x - t23 * x1;
  const double t1 = a1 * x2 + a2 * x1;
  const double t2 = std::floor(r23 * t1);
  const double z = t1 - t23 * t2;
  const double t3 = t23 * z + a2 * x2;
  const double t4 = std::floor(r46 * t3);
  *x = t3 - t46 * t4;
  return r46 * *x;
}

TEST(NpbRandom, FirstValuesOfTheCgSeed) {
  NpbRandom random;
  // 314159265 * 1220703125 mod 2^46, and the next one.
  EXPECT_DOUBLE_EQ(random.next(), 55909509111989.0 / 70368744177664.0);
  EXPECT_EQ(random.state(), 55909509111989u);
  random.next();
  EXPECT_EQ(random.state(), 61155031930969u);
}

TEST(NpbRandom, MatchesTheSplitDoubleFormulation) {
  NpbRandom random;
  double x = 314159265.0;
  for (int k = 0; k < 100000; ++k) {
    const double expected = reference_randlc(&x, 1220703125.0);
    ASSERT_EQ(random.next(), expected) << "step " << k;
  }
  double y = 314159265.0;
  double z = 314159265.0;
  for (int k = 0; k < 1000; ++k)
    ASSERT_EQ(randlc(&y, 1220703125.0), reference_randlc(&z, 1220703125.0));
  EXPECT_EQ(y, z);
}

TEST(NpbGenerator, PowerOfTwo) {
  EXPECT_EQ(npb_power_of_two_at_least(1), 2);  // NPB doubles before it compares
  EXPECT_EQ(npb_power_of_two_at_least(1400), 2048);
  EXPECT_EQ(npb_power_of_two_at_least(2048), 2048);
  EXPECT_EQ(npb_power_of_two_at_least(2049), 4096);
}

TEST(NpbGenerator, SprnvcDrawsDistinctPositionsBelowN) {
  NpbRandom random;
  NpbVector vector;
  for (int trial = 0; trial < 200; ++trial) {
    npb_sprnvc(random, 1400, 2048, 7, vector);
    ASSERT_EQ(vector.count, 7);
    std::set<int64_t> seen;
    for (int k = 0; k < vector.count; ++k) {
      EXPECT_GE(vector.index[k], 0);
      EXPECT_LT(vector.index[k], 1400);
      EXPECT_GT(vector.value[k], 0.0);
      EXPECT_LT(vector.value[k], 1.0);
      seen.insert(vector.index[k]);
    }
    EXPECT_EQ(seen.size(), 7u);
  }
}

TEST(NpbGenerator, SprnvcTakesTwoNumbersPerCandidate) {
  // The first accepted candidate is (value, position) from the first two numbers whose
  // position falls below n.
  NpbRandom random, replay;
  NpbVector vector;
  npb_sprnvc(random, 1400, 2048, 1, vector);
  for (;;) {
    const double value = replay.next();
    const int64_t position = static_cast<int64_t>(2048.0 * replay.next());
    if (position < 1400) {
      EXPECT_EQ(vector.value[0], value);
      EXPECT_EQ(vector.index[0], position);
      break;
    }
  }
  EXPECT_EQ(random.state(), replay.state());
}

TEST(NpbGenerator, VecsetReplacesOrAppends) {
  NpbVector vector;
  vector.count = 2;
  vector.index[0] = 4;
  vector.value[0] = 0.1;
  vector.index[1] = 9;
  vector.value[1] = 0.2;
  npb_vecset(vector, 9, 0.5);
  EXPECT_EQ(vector.count, 2);
  EXPECT_EQ(vector.value[1], 0.5);
  npb_vecset(vector, 3, 0.5);
  ASSERT_EQ(vector.count, 3);
  EXPECT_EQ(vector.index[2], 3);
  EXPECT_EQ(vector.value[2], 0.5);
}

LocalCsr whole_matrix(const NpbClass& cls) {
  return generate_npb_block(cls, MatrixBlock{0, cls.na, 0, cls.na, cls.na, cls.na}, 1);
}

double entry(const LocalCsr& a, int64_t row, int64_t col) {
  for (int64_t k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) {
    if (a.col[k] == col) return a.val[k];
  }
  return 0.0;
}

TEST(NpbGenerator, ClassSMatrixIsSymmetricWithANegativeShiftedDiagonal) {
  const NpbClass cls = *find_npb_class("S");
  const LocalCsr a = whole_matrix(cls);
  EXPECT_GT(a.nnz(), cls.na * cls.nonzer);
  for (int64_t row = 0; row < cls.na; ++row) {
    for (int64_t k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) {
      if (k > a.row_ptr[row]) {
        ASSERT_LT(a.col[k - 1], a.col[k]) << "columns ascend in row " << row;
      }
      const double mirrored = entry(a, a.col[k], row);
      ASSERT_NEAR(a.val[k], mirrored, 1e-14 * std::fabs(a.val[k])) << row << ", " << a.col[k];
    }
    // The diagonal holds rcond - shift plus a sum of squares below 1 per vector.
    const double diagonal = entry(a, row, row);
    EXPECT_LT(diagonal, kNpbRcond - cls.shift + cls.na);
    EXPECT_GT(diagonal, kNpbRcond - cls.shift);
  }
}

// Blocks of any layout are exactly the matching parts of the whole matrix.
TEST(NpbGenerator, BlocksAreSlicesOfTheWholeMatrix) {
  const NpbClass cls = *find_npb_class("S");
  const LocalCsr whole = whole_matrix(cls);
  for (Partition partition : {Partition::kOneD, Partition::kTwoD}) {
    for (int ranks : {1, 3, 4, 9}) {
      if (!partition_fits(partition, ranks, nullptr)) continue;
      int64_t total = 0;
      for (int rank = 0; rank < ranks; ++rank) {
        const Layout layout = make_layout(partition, cls.na, ranks, rank);
        const LocalCsr block = generate_npb_block(cls, layout.block, 2);
        total += block.nnz();
        for (int64_t r = 0; r < block.rows; ++r) {
          const int64_t row = layout.block.row_begin + r;
          std::vector<std::pair<int64_t, double>> expected;
          if (row < cls.na) {
            for (int64_t k = whole.row_ptr[row]; k < whole.row_ptr[row + 1]; ++k) {
              const int64_t col = whole.col[k];
              if (col >= layout.block.col_begin && col < layout.block.col_end) {
                expected.push_back({col - layout.block.col_begin, whole.val[k]});
              }
            }
          }
          ASSERT_EQ(block.row_ptr[r + 1] - block.row_ptr[r], static_cast<int64_t>(expected.size()));
          for (size_t e = 0; e < expected.size(); ++e) {
            ASSERT_EQ(block.col[block.row_ptr[r] + e], expected[e].first);
            ASSERT_EQ(block.val[block.row_ptr[r] + e], expected[e].second);  // bit for bit
          }
        }
      }
      EXPECT_EQ(total, whole.nnz()) << partition_name(partition) << " " << ranks;
    }
  }
}

// NPB's power iteration on the whole class S matrix, serially, reaches the official zeta.
TEST(NpbGenerator, SerialClassSVerifies) {
  const NpbClass cls = *find_npb_class("S");
  const LocalCsr a = whole_matrix(cls);
  const double zeta = power_iteration_zeta(
      cls, [&a](const double* in, double* out) { csr_multiply_reference(a, in, out); });
  EXPECT_TRUE(npb_verified(cls, zeta)) << "zeta " << zeta;
}

TEST(NpbClass, LookupAndMops) {
  EXPECT_FALSE(find_npb_class("Q"));
  EXPECT_FALSE(find_npb_class("SS"));
  EXPECT_FALSE(find_npb_class(""));
  ASSERT_TRUE(find_npb_class("b"));
  EXPECT_EQ(find_npb_class("b")->na, 75000);
  EXPECT_EQ(find_npb_class("D")->nonzer, 21);
  const NpbClass s = *find_npb_class("S");
  // 2 * niter * na * (3 + nonzer (nonzer+1) + 25 (5 + nonzer (nonzer+1)) + 3) operations.
  EXPECT_DOUBLE_EQ(npb_mops(s, 1.0), 2.0 * 15 * 1400 * (3 + 56 + 25 * (5 + 56) + 3) / 1e6);
  EXPECT_EQ(npb_mops(s, 0.0), 0.0);
  EXPECT_TRUE(npb_verified(s, s.zeta_verify * (1 + 0.9e-10)));
  EXPECT_FALSE(npb_verified(s, s.zeta_verify * (1 + 1.1e-10)));
  EXPECT_FALSE(npb_verified(s, std::nan("")));
}

TEST(Layout, PiecesAndBlocksCoverTheMatrixOnce) {
  for (int64_t n : {1, 7, 1400, 1401}) {
    for (Partition partition : {Partition::kOneD, Partition::kTwoD}) {
      for (int ranks : {1, 2, 3, 4, 9, 16}) {
        if (!partition_fits(partition, ranks, nullptr)) continue;
        std::vector<int> owner(n, 0);
        std::vector<int> covered(n * 64, 0);
        for (int rank = 0; rank < ranks; ++rank) {
          const Layout layout = make_layout(partition, n, ranks, rank);
          for (int64_t i = 0; i < layout.own_count(); ++i) ++owner[layout.own_begin + i];
          const MatrixBlock& b = layout.block;
          EXPECT_LE(b.row_end - b.row_begin, b.rows_padded);
          EXPECT_LE(b.col_end - b.col_begin, b.cols_padded);
          for (int64_t row = b.row_begin; row < b.row_end; ++row) {
            for (int64_t col = b.col_begin; col < b.col_end && col < 64; ++col)
              ++covered[row * 64 + col];
          }
        }
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(owner[i], 1) << n << " " << ranks;
        for (int64_t row = 0; row < n && row < 64; ++row) {
          for (int64_t col = 0; col < n && col < 64; ++col) ASSERT_EQ(covered[row * 64 + col], 1);
        }
      }
    }
  }
  std::string reason;
  EXPECT_FALSE(partition_fits(Partition::kTwoD, 3, &reason));
  EXPECT_NE(reason.find("square"), std::string::npos);
  EXPECT_TRUE(partition_fits(Partition::kTwoD, 16, nullptr));
}

TEST(Csr, EntriesAreSortedAndDuplicatesSummedInOrder) {
  std::vector<LocalEntry> entries = {
      {1, 3, 1.0}, {0, 2, 0.5}, {1, 0, 2.0}, {1, 3, 1e-17}, {1, 3, -1.0}};
  const LocalCsr csr = csr_from_entries(entries, 3, 4, 0, 0);
  ASSERT_EQ(csr.row_ptr, (std::vector<int64_t>{0, 1, 3, 3}));
  EXPECT_EQ(csr.col, (std::vector<int32_t>{2, 0, 3}));
  EXPECT_EQ(csr.val[0], 0.5);
  EXPECT_EQ(csr.val[1], 2.0);
  EXPECT_EQ(csr.val[2], (1.0 + 1e-17) - 1.0);  // in the order given: 0, not 1e-17
}

class MtxFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    const std::string path =
        ::testing::TempDir() + "cg_unit_" + std::to_string(counter_++) + ".mtx";
    std::ofstream(path) << text;
    paths_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const std::string& path : paths_) std::remove(path.c_str());
  }
  std::string error_of(const std::string& text) {
    const std::string path = write(text);
    try {
      const MtxInfo info = read_mtx_info(path);
      read_mtx_block(path, info, MatrixBlock{0, info.rows, 0, info.cols, info.rows, info.cols},
                     nullptr);
    } catch (const MtxError& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind(path + ":", 0), 0u) << message;  // names the file
      return message.substr(path.size());
    }
    return "";
  }

  int counter_ = 0;
  std::vector<std::string> paths_;
};

TEST_F(MtxFile, GeneralRealEntries) {
  const std::string path = write(
      "%%MatrixMarket matrix coordinate real general\n% a comment\n\n3 3 5\n1 1 4.5\n3 1 -1e-3\n"
      "1 3 -1e-3\n2 2 +2\n3 3 1\n");
  const MtxInfo info = read_mtx_info(path);
  EXPECT_EQ(info.field, MtxField::kReal);
  EXPECT_FALSE(info.symmetric);
  EXPECT_EQ(info.rows, 3);
  EXPECT_EQ(info.entries, 5);
  LocalCsr transposed;
  const LocalCsr a = read_mtx_block(path, info, MatrixBlock{0, 3, 0, 3, 3, 3}, &transposed);
  EXPECT_EQ(a.nnz(), 5);
  EXPECT_EQ(entry(a, 0, 0), 4.5);
  EXPECT_EQ(entry(a, 2, 0), -1e-3);
  EXPECT_EQ(entry(a, 1, 1), 2.0);
  EXPECT_FALSE(check_block_symmetry(a, transposed));
  EXPECT_FALSE(check_block_diagonal(a, 3));
}

TEST_F(MtxFile, SymmetricStorageIsMirroredIntoEveryBlock) {
  const std::string path = write(
      "%%MatrixMarket matrix coordinate integer symmetric\n4 4 6\n1 1 4\n2 1 -1\n2 2 4\n3 3 4\n4 1 "
      "7\n4 4 9\n");
  const MtxInfo info = read_mtx_info(path);
  EXPECT_EQ(info.field, MtxField::kInteger);
  const LocalCsr a = read_mtx_block(path, info, MatrixBlock{0, 4, 0, 4, 4, 4}, nullptr);
  EXPECT_EQ(a.nnz(), 8);
  EXPECT_EQ(entry(a, 0, 1), -1.0);
  EXPECT_EQ(entry(a, 1, 0), -1.0);
  EXPECT_EQ(entry(a, 0, 3), 7.0);
  EXPECT_EQ(entry(a, 3, 0), 7.0);
  // The upper right 2x2 block of rows 0-1, columns 2-3 (padded to 3 x 3).
  const LocalCsr block = read_mtx_block(path, info, MatrixBlock{0, 2, 2, 4, 3, 3}, nullptr);
  EXPECT_EQ(block.nnz(), 1);
  EXPECT_EQ(entry(block, 0, 1), 7.0);
  EXPECT_EQ(block.rows, 3);
}

TEST_F(MtxFile, PatternEntriesAreOnes) {
  const std::string path =
      write("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 2\n3 3\n");
  const MtxInfo info = read_mtx_info(path);
  const LocalCsr a = read_mtx_block(path, info, MatrixBlock{0, 3, 0, 3, 3, 3}, nullptr);
  EXPECT_EQ(a.nnz(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(entry(a, i, i), 1.0);
}

TEST_F(MtxFile, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 x 1.0\n"),
            ":4: column index 'x' is not an integer");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n3 1 1.0\n"),
            ":4: row index 3 outside 1..2");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.0\n2 2 1.0\n"),
            ":5: the file ends after 2 of the 3 entries the size line announces");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n2 2 1.0\n"),
            ":4: more entries than the 1 the size line announces");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0 5\n"),
            ":3: unexpected '5' after the entry");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n"),
            ":3: the entry has no value");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n"),
            ":3: '1.5' is not an integer");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n"),
            ":3: value 'nan' is not finite");
  EXPECT_EQ(
      error_of("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1.0\n"),
      ":3: symmetric storage holds entries on or below the diagonal only; (1, 2) is above it");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 0\n"),
            ":1: unsupported field 'complex' (real, integer or pattern)");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1.0\n"),
            ":1: unsupported symmetry 'skew-symmetric' (general or symmetric)");
  EXPECT_EQ(error_of("%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n"),
            ":2: the matrix must be in coordinate format, not array");
  EXPECT_EQ(error_of("% no banner\n2 2 1\n1 1 1.0\n"),
            ":1: not a Matrix Market file (the first line must start with %%MatrixMarket)");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n2 2\n"),
            ":2: expected 'rows columns entries' on the size line");
  EXPECT_EQ(error_of("%%MatrixMarket matrix coordinate real general\n% only comments\n"),
            ":2: the file ends before the size line");
  EXPECT_EQ(error_of(""), ":1: empty file: not a Matrix Market file");
}

TEST_F(MtxFile, MissingFile) {
  try {
    read_mtx_info("/nonexistent/m.mtx");
    FAIL() << "no error";
  } catch (const MtxError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/m.mtx: cannot open"), std::string::npos);
  }
}

TEST_F(MtxFile, AsymmetryAndDiagonalChecks) {
  const std::string path = write(
      "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 2\n2 2 2\n3 3 0\n1 2 0.5\n2 1 "
      "0.25\n");
  const MtxInfo info = read_mtx_info(path);
  LocalCsr transposed;
  const LocalCsr a = read_mtx_block(path, info, MatrixBlock{0, 3, 0, 3, 3, 3}, &transposed);
  const std::optional<std::string> asymmetry = check_block_symmetry(a, transposed);
  ASSERT_TRUE(asymmetry);
  EXPECT_EQ(*asymmetry, "A(1, 2) = 0.5 but A(2, 1) = 0.25");
  const std::optional<std::string> diagonal = check_block_diagonal(a, 3);
  ASSERT_TRUE(diagonal);
  EXPECT_EQ(diagonal->rfind("zero on the diagonal: A(3, 3)", 0), 0u) << *diagonal;
  // Only the rows of this block whose diagonal lies inside it are checked.
  const LocalCsr corner = read_mtx_block(path, info, MatrixBlock{2, 3, 0, 2, 2, 2}, nullptr);
  EXPECT_FALSE(check_block_diagonal(corner, 3));

  const std::string missing =
      write("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 2\n2 2 2\n2 1 1\n");
  const LocalCsr b =
      read_mtx_block(missing, read_mtx_info(missing), MatrixBlock{0, 2, 0, 2, 2, 2}, &transposed);
  ASSERT_TRUE(check_block_symmetry(b, transposed));
  EXPECT_EQ(*check_block_symmetry(b, transposed), "A(2, 1) = 1 but A(1, 2) is not stored");
}

TEST_F(MtxFile, RightHandSides) {
  const std::string array = write("%%MatrixMarket matrix array real general\n4 1\n1.5\n-2\n3\n4\n");
  EXPECT_EQ(read_mtx_vector_piece(array, 4, 1, 2), (std::vector<double>{-2, 3}));
  EXPECT_EQ(read_mtx_vector_piece(array, 4, 3, 3), (std::vector<double>{4, 0, 0}));  // padding
  const std::string coordinate =
      write("%%MatrixMarket matrix coordinate real general\n4 1 2\n2 1 5\n4 1 6\n");
  EXPECT_EQ(read_mtx_vector_piece(coordinate, 4, 0, 4), (std::vector<double>{0, 5, 0, 6}));
  EXPECT_THROW(read_mtx_vector_piece(array, 5, 0, 5), MtxError);
  const std::string short_array = write("%%MatrixMarket matrix array real general\n3 1\n1\n2\n");
  try {
    read_mtx_vector_piece(short_array, 3, 0, 3);
    FAIL() << "no error";
  } catch (const MtxError& error) {
    EXPECT_NE(std::string(error.what()).find(":5: the file ends after 2 of the 3 values"),
              std::string::npos)
        << error.what();
  }
}

// Kernel times: launches summed by kernel in the order of their first launch, each launch's gap
// measured from the previous launch's end (negative where it started before that end).
TEST(KernelTimes, SumsLaunchesByKernelWithTheGapsBetweenThem) {
  const std::vector<KernelTime> launches = {{"spmv_slab", 0.0, 40.0, 3.0},
                                            {"slab_sum", 41.0, 45.0, 1.5},
                                            {"update_zr", 44.5, 50.0, 2.0},
                                            {"spmv_slab", 52.0, 90.0, 1.0}};
  const KernelTimesSummary summary = sum_kernel_times(launches, 2);
  ASSERT_EQ(summary.kernels.size(), 3u);
  EXPECT_EQ(summary.kernels[0].name, "spmv_slab");
  EXPECT_EQ(summary.kernels[0].launches, 2);
  EXPECT_DOUBLE_EQ(summary.kernels[0].busy_us, 78.0);
  EXPECT_DOUBLE_EQ(summary.kernels[0].peer_wait_us, 4.0);
  EXPECT_DOUBLE_EQ(summary.kernels[0].gap_us, 2.0);        // 0 before the first, 52 - 50
  EXPECT_DOUBLE_EQ(summary.kernels[0].work_max_us, 74.0);  // busy less the waits, this rank
  EXPECT_DOUBLE_EQ(summary.kernels[0].work_min_us, 74.0);
  EXPECT_EQ(summary.kernels[1].name, "slab_sum");
  EXPECT_DOUBLE_EQ(summary.kernels[1].gap_us, 1.0);
  EXPECT_EQ(summary.kernels[2].name, "update_zr");
  EXPECT_DOUBLE_EQ(summary.kernels[2].gap_us, -0.5);  // launched early
  EXPECT_DOUBLE_EQ(summary.span_us, 90.0);
  EXPECT_EQ(summary.steps, 2);
  EXPECT_TRUE(sum_kernel_times({}, 25).kernels.empty());
}

}  // namespace
}  // namespace tca_cg
