// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/sizes.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <stdexcept>

namespace tca_harness {

std::optional<size_t> parse_size(const std::string& text) {
  std::string value = text;
  const CLI::AsSizeValue as_size(false);  // kb = 1024 bytes
  try {
    if (!as_size(value).empty()) return std::nullopt;  // a non-empty result is the complaint
    if (value.find('-') != std::string::npos) return std::nullopt;  // stoull would wrap it
    size_t used = 0;
    const unsigned long long bytes = std::stoull(value, &used);  // the digits it left
    if (used != value.size() || bytes > SIZE_MAX) return std::nullopt;
    return static_cast<size_t>(bytes);
  } catch (const CLI::Error&) {
    return std::nullopt;
  } catch (const std::logic_error&) {  // std::stoull: no digits, or out of range
    return std::nullopt;
  }
}

std::string format_size(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + units[unit];
}

std::vector<size_t> size_series(size_t min, size_t max, size_t factor) {
  std::vector<size_t> sizes;
  if (factor < 2) factor = 2;
  for (size_t bytes = min; bytes <= max && bytes > 0; bytes *= factor) {
    sizes.push_back(bytes);
    if (bytes > max / factor) break;  // the next one would pass max (or overflow)
  }
  return sizes;
}

}  // namespace tca_harness
