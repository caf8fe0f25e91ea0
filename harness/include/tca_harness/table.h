// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Aligned text tables in the layout of nccl-tests and OSU: '#' comment lines stating the
// method, a '#' header (and units) line, then one row per measurement.
#pragma once

#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace tca_harness {

enum class Align { kLeft, kRight };

struct Column {
  std::string title;
  int width = 0;                // at least this many characters
  Align align = Align::kRight;  // within the width
  int precision = 3;            // digits after the point of floating-point cells
  std::string unit{};           // under the title on the units line, e.g. "(GB/s)"
  std::string gap = " ";        // printed before the column (never before the first)
};
// A last column of width 0 whose cell is empty prints nothing, not even its gap (a notes
// column that most rows leave empty).

// One cell: text as is, an integer, or a floating-point value printed with its column's
// precision.
class Cell {
 public:
  Cell(std::string text) : text_(std::move(text)) {}  // NOLINT: implicit by design
  Cell(const char* text) : text_(text) {}             // NOLINT
  template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  Cell(T value) : text_(std::to_string(value)) {}           // NOLINT
  Cell(double value) : number_(value), is_number_(true) {}  // NOLINT
  std::string text(int precision) const;

 private:
  std::string text_;
  double number_ = 0;
  bool is_number_ = false;
};

// printf into a std::string.
std::string format(const char* format_string, ...) __attribute__((format(printf, 1, 2)));

class Table {
 public:
  // Lines go to stdout, or to stderr where stdout carries the JSON report (`json`). A table
  // that is not `active` (every rank but the one that reports) prints nothing.
  explicit Table(bool json, bool active = true);
  Table(FILE* stream, bool active) : stream_(stream), active_(active) {}

  void set_columns(std::vector<Column> columns) { columns_ = std::move(columns); }
  FILE* stream() const { return stream_; }
  bool active() const { return active_; }

  void line(const std::string& text) const;     // as is, then a newline (flushed)
  void comment(const std::string& text) const;  // "# " + text
  void header() const;                          // "# " + the titles, aligned as the rows
  void units() const;                           // "# " + the units, aligned as the rows
  void row(const std::vector<Cell>& cells) const;

 private:
  // The columns' texts aligned; `commented` puts "# " into the first column's width.
  std::string compose(const std::vector<std::string>& texts, bool commented) const;

  std::vector<Column> columns_;
  FILE* stream_;
  bool active_;
};

}  // namespace tca_harness
