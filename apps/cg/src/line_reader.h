// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Reads a text file line by line in large blocks, counting lines (1-based) for messages.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace tca_cg {

class LineReader {
 public:
  // Throws std::runtime_error naming the file when it cannot be opened.
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its end ("\n" or "\r\n"); false at the end of the file.
  bool next(std::string_view& line);
  // The number of the line `next` returned last (0 before the first).
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  bool refill();

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  size_t begin_ = 0;  // first unread byte in buffer_
  size_t end_ = 0;    // bytes in buffer_
  bool eof_ = false;
  int64_t line_number_ = 0;
};

}  // namespace tca_cg
