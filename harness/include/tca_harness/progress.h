// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A progress line on stderr for long runs: "# <label>: <done>/<total> <detail>".
#pragma once

#include <cstddef>
#include <string>

namespace tca_harness {

class Progress {
 public:
  // `active`: only the rank that reports prints. On a terminal the line is rewritten in place;
  // elsewhere (logs) a line is printed at most every `interval_s` seconds and at the end.
  Progress(std::string label, size_t total, bool active, double interval_s = 1.0);
  ~Progress();  // finishes the line if finish() was not called
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(size_t done, const std::string& detail = "");
  void finish(const std::string& detail = "");  // done == total; ends the line

 private:
  void print(size_t done, const std::string& detail, bool last);

  std::string label_;
  size_t total_;
  bool active_;
  double interval_s_;
  bool terminal_;
  bool finished_ = false;
  double last_print_ = -1;
  size_t last_length_ = 0;
};

}  // namespace tca_harness
