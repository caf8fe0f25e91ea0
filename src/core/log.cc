#include "core/log.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <strings.h>

namespace tca {
namespace {
int g_rank = -1;

LogLevel parse_level() {
  const char* value = std::getenv("TCA_DEBUG");
  if (value == nullptr) return LogLevel::kNone;
  if (strcasecmp(value, "WARN") == 0) return LogLevel::kWarn;
  if (strcasecmp(value, "INFO") == 0) return LogLevel::kInfo;
  if (strcasecmp(value, "TRACE") == 0) return LogLevel::kTrace;
  return LogLevel::kNone;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kTrace: return "TRACE";
    case LogLevel::kNone: break;
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
