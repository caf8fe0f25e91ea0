#include "tca_harness/report.h"

#include <algorithm>
#include <iostream>

namespace tca_harness {

Report::Report(const std::string& program, bool active, const std::string& key)
    : head_({{key, program}}), active_(active) {}

void Report::set(const std::string& key, nlohmann::ordered_json value) {
  head_[key] = std::move(value);
}

void Report::add_row(nlohmann::ordered_json row) { rows_.push_back(std::move(row)); }

void Report::add_note(const std::string& text) {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) notes_.push_back(text);
}

nlohmann::ordered_json Report::document() const {
  nlohmann::ordered_json document = head_;
  document["rows"] = nlohmann::ordered_json::array();
  for (const nlohmann::ordered_json& row : rows_) document["rows"].push_back(row);
  if (!notes_.empty()) document["notes"] = notes_;
  return document;
}

void Report::print() const {
  if (active_) std::cout << document().dump(2) << std::endl;
}

void skip_note(const Table& table, Report& report, const std::string& text) {
  table.comment(text);
  report.add_note(text);
}

}  // namespace tca_harness
