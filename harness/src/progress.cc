// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

#include "tca_harness/timer.h"

namespace tca_harness {

Progress::Progress(std::string label, size_t total, bool active, double interval_s)
    : label_(std::move(label)),
      total_(total),
      active_(active),
      interval_s_(interval_s),
      terminal_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (!finished_ && last_print_ >= 0) finish();
}

void Progress::update(size_t done, const std::string& detail) {
  if (!active_ || finished_) return;
  const double now = now_seconds();
  if (last_print_ >= 0 && now - last_print_ < interval_s_) return;
  last_print_ = now;
  print(done, detail, false);
}

void Progress::finish(const std::string& detail) {
  if (!active_ || finished_) return;
  finished_ = true;
  print(total_, detail, true);
}

void Progress::print(size_t done, const std::string& detail, bool last) {
  std::string text = "# " + label_ + ": " + std::to_string(done) + "/" + std::to_string(total_);
  if (!detail.empty()) text += " " + detail;
  if (terminal_) {
    // Rewrite the line in place; blanks cover what a longer previous line left.
    const size_t blanks = last_length_ > text.size() ? last_length_ - text.size() : 0;
    std::fprintf(stderr, "\r%s%s%s", text.c_str(), std::string(blanks, ' ').c_str(),
                 last ? "\n" : "");
    last_length_ = text.size();
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

}  // namespace tca_harness
