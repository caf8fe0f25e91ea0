// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/table.h"

#include <cstdarg>

namespace tca_harness {
namespace {

std::string pad(const std::string& text, int width, Align align) {
  if (width <= 0 || text.size() >= static_cast<size_t>(width)) return text;
  const size_t missing = static_cast<size_t>(width) - text.size();
  return align == Align::kLeft ? text + std::string(missing, ' ')
                               : std::string(missing, ' ') + text;
}

}  // namespace

std::string Cell::text(int precision) const {
  if (!is_number_) return text_;
  return format("%.*f", precision, number_);
}

std::string format(const char* format_string, ...) {
  va_list args;
  va_start(args, format_string);
  va_list again;
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, format_string, args);
  va_end(args);
  std::string text(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(text.data(), text.size() + 1, format_string, again);
  va_end(again);
  return text;
}

Table::Table(bool json, bool active) : stream_(json ? stderr : stdout), active_(active) {}

void Table::line(const std::string& text) const {
  if (!active_) return;
  std::fputs(text.c_str(), stream_);
  std::fputc('\n', stream_);
  std::fflush(stream_);
}

void Table::comment(const std::string& text) const { line("# " + text); }

std::string Table::compose(const std::vector<std::string>& texts, bool commented) const {
  std::string composed;
  for (size_t i = 0; i < columns_.size() && i < texts.size(); ++i) {
    const Column& column = columns_[i];
    const bool last = i + 1 == columns_.size();
    if (last && column.width == 0 && texts[i].empty()) break;
    if (i > 0) composed += column.gap;
    if (i == 0 && commented)
      composed += "# " + pad(texts[i], column.width - 2, column.align);
    else
      composed += pad(texts[i], column.width, column.align);
  }
  return composed;
}

void Table::header() const {
  std::vector<std::string> titles;
  for (const Column& column : columns_) titles.push_back(column.title);
  line(compose(titles, true));
}

void Table::units() const {
  std::vector<std::string> units;
  for (const Column& column : columns_) units.push_back(column.unit);
  line(compose(units, true));
}

void Table::row(const std::vector<Cell>& cells) const {
  std::vector<std::string> texts;
  for (size_t i = 0; i < cells.size() && i < columns_.size(); ++i)
    texts.push_back(cells[i].text(columns_[i].precision));
  line(compose(texts, false));
}

}  // namespace tca_harness
