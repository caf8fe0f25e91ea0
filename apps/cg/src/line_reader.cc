// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "line_reader.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tca_cg {

namespace {
constexpr size_t kBlockBytes = size_t{1} << 20;
}

LineReader::LineReader(const std::string& path) : path_(path), buffer_(kBlockBytes) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
}

LineReader::~LineReader() {
  if (file_) std::fclose(file_);
}

bool LineReader::refill() {
  if (eof_) return false;
  // Keep the unread tail, grow when one line fills the whole buffer.
  const size_t tail = end_ - begin_;
  if (begin_ > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, tail);
  begin_ = 0;
  end_ = tail;
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_);
  if (got == 0) {
    if (std::ferror(file_))
      throw std::runtime_error(path_ + ": read error: " + std::strerror(errno));
    eof_ = true;
    return false;
  }
  end_ += got;
  return true;
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const void* newline = std::memchr(start, '\n', end_ - begin_);
    if (newline) {
      size_t length = static_cast<const char*>(newline) - start;
      begin_ += length + 1;
      if (length > 0 && start[length - 1] == '\r') --length;
      line = std::string_view(start, length);
      ++line_number_;
      return true;
    }
    if (!refill()) {
      if (begin_ == end_) return false;
      // The last line has no newline.
      start = buffer_.data() + begin_;
      size_t length = end_ - begin_;
      begin_ = end_;
      if (length > 0 && start[length - 1] == '\r') --length;
      line = std::string_view(start, length);
      ++line_number_;
      return true;
    }
  }
}

}  // namespace tca_cg
