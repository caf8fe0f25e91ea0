// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "mtx_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

#include "line_reader.h"

namespace tca_cg {
namespace {

[[noreturn]] void fail(const LineReader& reader, const std::string& message) {
  throw MtxError(reader.path() + ":" + std::to_string(reader.line_number()) + ": " + message);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// Splits on blanks and tabs.
std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool blank_or_comment(std::string_view line) {
  for (char c : line) {
    if (c == '%') return true;
    if (!is_space(c)) return false;
  }
  return true;
}

bool parse_int(std::string_view token, int64_t* value) {
  if (!token.empty() && token[0] == '+') token.remove_prefix(1);
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), *value);
  return error == std::errc() && end == token.data() + token.size();
}

bool parse_double(std::string_view token, double* value) {
  if (!token.empty() && token[0] == '+') token.remove_prefix(1);
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), *value);
  return error == std::errc() && end == token.data() + token.size();
}

std::string quoted(std::string_view token) { return "'" + std::string(token) + "'"; }

// Reads the banner and the size line; leaves the reader after the size line.
MtxInfo read_header(LineReader& reader) {
  std::string_view line;
  if (!reader.next(line))
    throw MtxError(reader.path() + ":1: empty file: not a Matrix Market file");
  const std::vector<std::string_view> banner = tokens(line);
  if (banner.empty() || lower(banner[0]) != "%%matrixmarket") {
    fail(reader, "not a Matrix Market file (the first line must start with %%MatrixMarket)");
  }
  if (banner.size() != 5) {
    fail(reader, "the banner needs 4 words after %%MatrixMarket: matrix, format, field, symmetry");
  }
  if (lower(banner[1]) != "matrix")
    fail(reader, "unsupported object " + quoted(banner[1]) + " (matrix)");
  MtxInfo info;
  const std::string format = lower(banner[2]);
  if (format == "coordinate") {
    info.coordinate = true;
  } else if (format == "array") {
    info.coordinate = false;
  } else {
    fail(reader, "unknown format " + quoted(banner[2]) + " (coordinate or array)");
  }
  const std::string field = lower(banner[3]);
  if (field == "real" || field == "double") {
    info.field = MtxField::kReal;
  } else if (field == "integer") {
    info.field = MtxField::kInteger;
  } else if (field == "pattern") {
    info.field = MtxField::kPattern;
  } else {
    fail(reader, "unsupported field " + quoted(banner[3]) + " (real, integer or pattern)");
  }
  const std::string symmetry = lower(banner[4]);
  if (symmetry == "general") {
    info.symmetric = false;
  } else if (symmetry == "symmetric") {
    info.symmetric = true;
  } else {
    fail(reader, "unsupported symmetry " + quoted(banner[4]) + " (general or symmetric)");
  }
  if (!info.coordinate && info.field == MtxField::kPattern)
    fail(reader, "array format cannot be pattern");
  do {
    if (!reader.next(line)) fail(reader, "the file ends before the size line");
  } while (blank_or_comment(line));
  const std::vector<std::string_view> size = tokens(line);
  const size_t expected = info.coordinate ? 3 : 2;
  const char* shape = info.coordinate ? "'rows columns entries'" : "'rows columns'";
  int64_t numbers[3] = {0, 0, 0};
  if (size.size() != expected) fail(reader, std::string("expected ") + shape + " on the size line");
  for (size_t k = 0; k < expected; ++k) {
    if (!parse_int(size[k], &numbers[k]) || numbers[k] < 0) {
      fail(reader, "size line: " + quoted(size[k]) + " is not a non-negative integer");
    }
  }
  info.rows = numbers[0];
  info.cols = numbers[1];
  info.entries = info.coordinate ? numbers[2] : info.rows * info.cols;
  if (info.rows < 1 || info.cols < 1) fail(reader, "the matrix is empty");
  if (info.rows > INT32_MAX || info.cols > INT32_MAX)
    fail(reader, "more than 2^31-1 rows or columns");
  return info;
}

// The value of an entry's third token (pattern: 1).
double entry_value(const LineReader& reader, const MtxInfo& info,
                   const std::vector<std::string_view>& words, size_t at) {
  if (info.field == MtxField::kPattern) return 1.0;
  if (words.size() <= at) fail(reader, "the entry has no value");
  if (info.field == MtxField::kInteger) {
    int64_t value = 0;
    if (!parse_int(words[at], &value)) fail(reader, quoted(words[at]) + " is not an integer");
    return static_cast<double>(value);
  }
  double value = 0.0;
  if (!parse_double(words[at], &value)) fail(reader, quoted(words[at]) + " is not a number");
  if (!std::isfinite(value)) fail(reader, "value " + quoted(words[at]) + " is not finite");
  return value;
}

int64_t entry_index(const LineReader& reader, std::string_view token, int64_t bound,
                    const char* what) {
  int64_t index = 0;
  if (!parse_int(token, &index))
    fail(reader, std::string(what) + " index " + quoted(token) + " is not an integer");
  if (index < 1 || index > bound) {
    fail(reader, std::string(what) + " index " + std::to_string(index) + " outside 1.." +
                     std::to_string(bound));
  }
  return index - 1;
}

// Calls visit(row, col, value) for every entry line of a coordinate file after the header.
void scan_coordinate(LineReader& reader, const MtxInfo& info,
                     const std::function<void(int64_t, int64_t, double)>& visit) {
  const size_t width = info.field == MtxField::kPattern ? 2 : 3;
  std::string_view line;
  int64_t seen = 0;
  while (reader.next(line)) {
    if (blank_or_comment(line)) continue;
    if (seen == info.entries) {
      fail(reader,
           "more entries than the " + std::to_string(info.entries) + " the size line announces");
    }
    const std::vector<std::string_view> words = tokens(line);
    if (words.size() < 2)
      fail(reader, "expected 'row column" + std::string(width == 3 ? " value'" : "'"));
    const int64_t row = entry_index(reader, words[0], info.rows, "row");
    const int64_t col = entry_index(reader, words[1], info.cols, "column");
    const double value = entry_value(reader, info, words, 2);
    if (words.size() > width)
      fail(reader, "unexpected " + quoted(words[width]) + " after the entry");
    if (info.symmetric && col > row) {
      fail(reader, "symmetric storage holds entries on or below the diagonal only; (" +
                       std::to_string(row + 1) + ", " + std::to_string(col + 1) + ") is above it");
    }
    ++seen;
    visit(row, col, value);
  }
  if (seen < info.entries) {
    throw MtxError(reader.path() + ":" + std::to_string(reader.line_number() + 1) +
                   ": the file ends after " + std::to_string(seen) + " of the " +
                   std::to_string(info.entries) + " entries the size line announces");
  }
}

}  // namespace

const char* mtx_field_name(MtxField field) {
  switch (field) {
    case MtxField::kReal:
      return "real";
    case MtxField::kInteger:
      return "integer";
    case MtxField::kPattern:
      return "pattern";
  }
  return "?";
}

MtxInfo read_mtx_info(const std::string& path) {
  try {
    LineReader reader(path);
    return read_header(reader);
  } catch (const MtxError&) {
    throw;
  } catch (const std::runtime_error& error) {
    throw MtxError(error.what());
  }
}

void scan_mtx_entries(const std::string& path,
                      const std::function<void(int64_t, int64_t, double)>& visit) {
  try {
    LineReader reader(path);
    const MtxInfo info = read_header(reader);
    if (!info.coordinate) fail(reader, "the matrix must be in coordinate format, not array");
    scan_coordinate(reader, info, visit);
  } catch (const MtxError&) {
    throw;
  } catch (const std::runtime_error& error) {
    throw MtxError(error.what());
  }
}

LocalCsr read_mtx_block(const std::string& path, const MtxInfo& info, const MatrixBlock& block,
                        LocalCsr* transposed) {
  auto inside = [&block](int64_t row, int64_t col) {
    return row >= block.row_begin && row < block.row_end && col >= block.col_begin &&
           col < block.col_end;
  };
  std::vector<LocalEntry> entries;
  std::vector<LocalEntry> mirror;
  auto local = [&block](int64_t row, int64_t col, double value) {
    return LocalEntry{row - block.row_begin, static_cast<int32_t>(col - block.col_begin), value};
  };
  scan_mtx_entries(path, [&](int64_t row, int64_t col, double value) {
    if (inside(row, col)) entries.push_back(local(row, col, value));
    if (row == col || !inside(col, row)) return;
    if (info.symmetric) {
      entries.push_back(local(col, row, value));
    } else if (transposed) {
      mirror.push_back(local(col, row, value));
    }
  });
  if (transposed && !info.symmetric) {
    // The diagonal of A^T is A's: add it so the two blocks compare entry by entry.
    for (const LocalEntry& e : entries) {
      if (e.row + block.row_begin == e.col + block.col_begin) mirror.push_back(e);
    }
    *transposed = csr_from_entries(std::move(mirror), block.rows_padded, block.cols_padded,
                                   block.row_begin, block.col_begin);
  }
  return csr_from_entries(std::move(entries), block.rows_padded, block.cols_padded, block.row_begin,
                          block.col_begin);
}

namespace {

bool nearly_equal(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b));
}

std::string position(const LocalCsr& csr, int64_t row, int64_t col) {
  return "(" + std::to_string(csr.row_begin + row + 1) + ", " +
         std::to_string(csr.col_begin + col + 1) + ")";
}

std::string transposed_position(const LocalCsr& csr, int64_t row, int64_t col) {
  return "(" + std::to_string(csr.col_begin + col + 1) + ", " +
         std::to_string(csr.row_begin + row + 1) + ")";
}

std::string number(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

}  // namespace

std::optional<std::string> check_block_symmetry(const LocalCsr& block, const LocalCsr& transposed) {
  for (int64_t r = 0; r < block.rows; ++r) {
    int64_t a = block.row_ptr[r], a_end = block.row_ptr[r + 1];
    int64_t t = transposed.row_ptr[r], t_end = transposed.row_ptr[r + 1];
    while (a < a_end || t < t_end) {
      const int64_t ca = a < a_end ? block.col[a] : INT64_MAX;
      const int64_t ct = t < t_end ? transposed.col[t] : INT64_MAX;
      if (ca == ct) {
        if (!nearly_equal(block.val[a], transposed.val[t])) {
          return "A" + position(block, r, ca) + " = " + number(block.val[a]) + " but A" +
                 transposed_position(block, r, ca) + " = " + number(transposed.val[t]);
        }
        ++a;
        ++t;
      } else if (ca < ct) {
        if (block.val[a] != 0.0) {
          return "A" + position(block, r, ca) + " = " + number(block.val[a]) + " but A" +
                 transposed_position(block, r, ca) + " is not stored";
        }
        ++a;
      } else {
        if (transposed.val[t] != 0.0) {
          return "A" + transposed_position(block, r, ct) + " = " + number(transposed.val[t]) +
                 " but A" + position(block, r, ct) + " is not stored";
        }
        ++t;
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_block_diagonal(const LocalCsr& block, int64_t rows_in_matrix) {
  for (int64_t r = 0; r < block.rows; ++r) {
    const int64_t global = block.row_begin + r;
    if (global >= rows_in_matrix) break;
    const int64_t c = global - block.col_begin;
    if (c < 0 || c >= block.cols) continue;
    double diagonal = 0.0;
    for (int64_t k = block.row_ptr[r]; k < block.row_ptr[r + 1]; ++k) {
      if (block.col[k] == c) diagonal = block.val[k];
    }
    if (diagonal == 0.0) {
      return "zero on the diagonal: A(" + std::to_string(global + 1) + ", " +
             std::to_string(global + 1) +
             ") is 0 or not stored; CG needs a symmetric positive definite matrix";
    }
    if (diagonal < 0.0) {
      return "negative diagonal entry A(" + std::to_string(global + 1) + ", " +
             std::to_string(global + 1) + ") = " + number(diagonal) +
             ": the matrix is not positive definite";
    }
  }
  return std::nullopt;
}

std::vector<double> read_mtx_vector_piece(const std::string& path, int64_t n, int64_t begin,
                                          int64_t count) {
  std::vector<double> piece(count, 0.0);
  auto keep = [&](int64_t index, double value) {
    if (index >= begin && index < begin + count) piece[index - begin] = value;
  };
  try {
    LineReader reader(path);
    const MtxInfo info = read_header(reader);
    if (info.rows != n || info.cols != 1) {
      fail(reader, "the right-hand side is " + std::to_string(info.rows) + " x " +
                       std::to_string(info.cols) + "; the matrix needs " + std::to_string(n) +
                       " x 1");
    }
    if (info.coordinate) {
      scan_coordinate(reader, info, [&](int64_t row, int64_t, double value) { keep(row, value); });
      return piece;
    }
    std::string_view line;
    int64_t seen = 0;
    while (reader.next(line)) {
      if (blank_or_comment(line)) continue;
      if (seen == n) fail(reader, "more values than the " + std::to_string(n) + " rows");
      const std::vector<std::string_view> words = tokens(line);
      if (words.size() != 1) fail(reader, "expected one value per line");
      keep(seen, entry_value(reader, info, words, 0));
      ++seen;
    }
    if (seen < n) {
      throw MtxError(path + ":" + std::to_string(reader.line_number() + 1) +
                     ": the file ends after " + std::to_string(seen) + " of the " +
                     std::to_string(n) + " values");
    }
  } catch (const MtxError&) {
    throw;
  } catch (const std::runtime_error& error) {
    throw MtxError(error.what());
  }
  return piece;
}

}  // namespace tca_cg
