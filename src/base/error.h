// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Error reporting: every internal call returns tcaResult; failures record a message with the
// place they were detected, and TCA_CHECK appends each frame they pass on the way up.
#pragma once

#include <fmt/format.h>

#include <string>

#include "tca/tca.h"

namespace tca {

// Records `message` (with file:line) as this thread's last error and returns `code`.
tcaResult record_error(tcaResult code, const char* file, int line, const std::string& message);
// Adds one "at file:line" frame to the message of the error being passed upward.
tcaResult append_frame(tcaResult code, const char* file, int line);
void clear_last_error();
// Makes `message`, as recorded on another thread, this thread's last error; returns `code`.
tcaResult adopt_error(tcaResult code, const std::string& message);
const char* last_error_message();

// Keeps this thread's last error across clean-up calls whose own failures are secondary: the
// message in force when it was made is back when it goes (RAII).
class ErrorKeeper {
 public:
  ErrorKeeper() : kept_(last_error_message()) {}
  ~ErrorKeeper();
  ErrorKeeper(const ErrorKeeper&) = delete;
  ErrorKeeper& operator=(const ErrorKeeper&) = delete;

 private:
  std::string kept_;
};

}  // namespace tca

// Fails the current function with `code` and a formatted detail message.
#define TCA_FAIL(code, ...) \
  return ::tca::record_error((code), __FILE__, __LINE__, ::fmt::format(__VA_ARGS__))

// Evaluates a tcaResult expression; on failure returns it, carrying file:line upward.
#define TCA_CHECK(expr)                                                  \
  do {                                                                   \
    const tcaResult tca_check_result_ = (expr);                          \
    if (tca_check_result_ != TCA_SUCCESS)                                \
      return ::tca::append_frame(tca_check_result_, __FILE__, __LINE__); \
  } while (0)
