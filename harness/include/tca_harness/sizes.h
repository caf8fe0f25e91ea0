// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Byte sizes as programs read and print them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tca_harness {

// "4096", "4K", "64M", "1G", "2KiB", "8 kb" (case-insensitive; 1K = 1024), or nullopt.
// The same dialect as the size options of Cli (options.h).
std::optional<size_t> parse_size(const std::string& text);

// "8 B", "4 KiB", "3 MiB", "1 GiB": the largest unit that divides the size exactly.
std::string format_size(size_t bytes);

// min, min*factor, min*factor^2, ... up to max (factor >= 2), without overflowing.
std::vector<size_t> size_series(size_t min, size_t max, size_t factor);

}  // namespace tca_harness
