// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Writes the Matrix Market files the tca-cg tests read into a folder: symmetric positive
// definite matrices in every storage the reader takes (real / integer / pattern, general /
// symmetric), a right-hand side, and malformed or unsuitable files for the error tests.
//   cg_test_matrices DIR
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using Entries = std::map<std::pair<int, int>, double>;  // (row, col) 1-based -> value

// The 5-point Laplacian of a side x side grid: integer, SPD (diagonal 4, neighbours -1).
Entries laplacian(int side) {
  Entries a;
  auto at = [side](int x, int y) { return y * side + x + 1; };
  for (int y = 0; y < side; ++y) {
    for (int x = 0; x < side; ++x) {
      const int i = at(x, y);
      a[{i, i}] = 4;
      if (x > 0) a[{i, at(x - 1, y)}] = -1;
      if (x + 1 < side) a[{i, at(x + 1, y)}] = -1;
      if (y > 0) a[{i, at(x, y - 1)}] = -1;
      if (y + 1 < side) a[{i, at(x, y + 1)}] = -1;
    }
  }
  return a;
}

// A random symmetric, strictly diagonally dominant matrix with a positive diagonal (SPD):
// a few off-diagonal entries per row from a fixed linear congruential sequence.
Entries random_spd(int n) {
  Entries a;
  unsigned long long state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  };
  std::vector<double> row_sum(n + 1, 0.0);
  for (int i = 1; i <= n; ++i) {
    for (int k = 0; k < 4; ++k) {
      const int j = 1 + static_cast<int>(next() * n);
      if (j == i || j > n) continue;
      const double v = next() - 0.5;
      a[{i, j}] = v;
      a[{j, i}] = v;
    }
  }
  for (const auto& [position, value] : a) row_sum[position.first] += std::fabs(value);
  for (int i = 1; i <= n; ++i) a[{i, i}] = row_sum[i] + 1.0 + next();
  return a;
}

bool write_matrix(const std::string& path, int rows, int cols, const Entries& a, const char* field,
                  bool symmetric) {
  std::ofstream out(path);
  out << "%%MatrixMarket matrix coordinate " << field << (symmetric ? " symmetric" : " general")
      << "\n";
  out << "% written by cg_test_matrices\n";
  int count = 0;
  for (const auto& [position, value] : a) count += !symmetric || position.second <= position.first;
  out << rows << " " << cols << " " << count << "\n";
  out.precision(17);
  for (const auto& [position, value] : a) {
    if (symmetric && position.second > position.first) continue;
    out << position.first << " " << position.second;
    if (std::string(field) == "integer") {
      out << " " << static_cast<long long>(value);
    } else if (std::string(field) != "pattern") {
      out << " " << value;
    }
    out << "\n";
  }
  return static_cast<bool>(out);
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

// b = A * x for x[i] = 1 + i mod 3, in array format.
bool write_rhs(const std::string& path, int n, const Entries& a) {
  std::vector<double> b(n + 1, 0.0);
  for (const auto& [position, value] : a)
    b[position.first] += value * (1 + (position.second - 1) % 3);
  std::ofstream out(path);
  out << "%%MatrixMarket matrix array real general\n" << n << " 1\n";
  out.precision(17);
  for (int i = 1; i <= n; ++i) out << b[i] << "\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cg_test_matrices DIR\n");
    return 1;
  }
  const std::string dir = std::string(argv[1]) + "/";
  const Entries grid = laplacian(12);  // n = 144
  const Entries random = random_spd(203);
  Entries identity;
  for (int i = 1; i <= 57; ++i) identity[{i, i}] = 1;
  Entries asymmetric = random;
  asymmetric[{5, 9}] = 0.25;  // (9, 5) stays as it was
  Entries zero_diagonal = grid;
  zero_diagonal[{7, 7}] = 0;
  bool ok =
      write_matrix(dir + "laplace_integer_symmetric.mtx", 144, 144, grid, "integer", true) &&
      write_matrix(dir + "laplace_integer_general.mtx", 144, 144, grid, "integer", false) &&
      write_matrix(dir + "random_real_symmetric.mtx", 203, 203, random, "real", true) &&
      write_matrix(dir + "random_real_general.mtx", 203, 203, random, "real", false) &&
      write_matrix(dir + "identity_pattern_symmetric.mtx", 57, 57, identity, "pattern", true) &&
      write_matrix(dir + "identity_pattern_general.mtx", 57, 57, identity, "pattern", false) &&
      write_rhs(dir + "laplace_rhs.mtx", 144, grid) &&
      write_matrix(dir + "bad_asymmetric.mtx", 203, 203, asymmetric, "real", false) &&
      write_matrix(dir + "bad_zero_diagonal.mtx", 144, 144, zero_diagonal, "integer", true) &&
      write_matrix(dir + "bad_nonsquare.mtx", 144, 150, grid, "integer", false) &&
      write_text(
          dir + "bad_token.mtx",
          "%%MatrixMarket matrix coordinate real general\n% comment\n3 3 4\n1 1 2.0\n2 2 2.0\n"
          "3 x 1.0\n3 3 2.0\n") &&
      write_text(
          dir + "bad_truncated.mtx",
          "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 2.0\n2 2 2.0\n3 3 2.0\n") &&
      write_text(
          dir + "bad_upper.mtx",
          "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2.0\n2 2 2.0\n1 3 0.5\n"
          "3 3 2.0\n");
  if (!ok) {
    std::fprintf(stderr, "cg_test_matrices: cannot write into %s\n", argv[1]);
    return 1;
  }
  return 0;
}
