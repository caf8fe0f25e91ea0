// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "base/log.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/error.h"
#include "base/settings.h"

namespace tca {
namespace {
int g_rank = -1;

LogLevel parse_level() {
  std::string value;
  if (setting_choice("TCA_DEBUG", &value) != TCA_SUCCESS) {
    // Logging has no caller to return the error to: say it once, and log nothing.
    std::fprintf(stderr, "[tca] %s; logging stays off\n", last_error_message());
    clear_last_error();
    return LogLevel::kNone;
  }
  if (value == "warn") return LogLevel::kWarn;
  if (value == "info") return LogLevel::kInfo;
  if (value == "trace") return LogLevel::kTrace;
  return LogLevel::kNone;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kTrace:
      return "TRACE";
    case LogLevel::kNone:
      break;
  }
  return "";
}
}  // namespace

LogLevel log_level() {
  static const LogLevel level = parse_level();
  return level;
}

void set_log_rank(int rank) { g_rank = rank; }

void log_line(LogLevel level, const std::string& text) {
  std::fprintf(stderr, "[tca rank %d pid %d] %s %s\n", g_rank, static_cast<int>(getpid()),
               level_name(level), text.c_str());
}

}  // namespace tca
