// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Logging chosen by $TCA_DEBUG (NONE, WARN, INFO, TRACE; like NCCL_DEBUG), to stderr.
#pragma once

#include <fmt/format.h>

namespace tca {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

LogLevel log_level();
void set_log_rank(int rank);
void log_line(LogLevel level, const std::string& text);

}  // namespace tca

#define TCA_LOG(level, ...)                                                                  \
  do {                                                                                       \
    if (::tca::log_level() >= (level)) ::tca::log_line((level), ::fmt::format(__VA_ARGS__)); \
  } while (0)
#define TCA_WARN(...) TCA_LOG(::tca::LogLevel::kWarn, __VA_ARGS__)
#define TCA_INFO(...) TCA_LOG(::tca::LogLevel::kInfo, __VA_ARGS__)
#define TCA_TRACE(...) TCA_LOG(::tca::LogLevel::kTrace, __VA_ARGS__)
