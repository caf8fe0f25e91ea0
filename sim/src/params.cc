// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "params.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

namespace tca_sim {
namespace {

std::string trim(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

// Splits "3.5GB/s" into 3.5 and "GB/s"; throws when there is no number or it is not finite.
std::pair<double, std::string> number_and_unit(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw Error("'" + text + "' is not a number with a unit");
  }
  if (!std::isfinite(value) || value < 0) throw Error("'" + text + "' is not a finite value >= 0");
  return {value, trim(text.substr(used))};
}

double scaled(const std::string& text, const std::vector<std::pair<const char*, double>>& units,
              const char* what) {
  const auto [value, unit] = number_and_unit(text);
  for (const auto& [name, factor] : units)
    if (unit == name) return value * factor;
  std::string known;
  for (const auto& [name, factor] : units) known += std::string(known.empty() ? "" : ", ") + name;
  throw Error("'" + text + "' is not a " + what + " (units: " + known + ")");
}

}  // namespace

double parse_seconds(const std::string& text) {
  return scaled(text, {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}}, "time");
}

double parse_bandwidth(const std::string& text) {
  return scaled(text, {{"B/s", 1.0}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}}, "bandwidth");
}

double parse_bytes(const std::string& text) {
  return scaled(text, {{"B", 1.0}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}},
                "size");
}

ParamFile ParamFile::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

ParamFile ParamFile::parse(const std::string& text, const std::string& name) {
  ParamFile file;
  file.name_ = name;
  std::istringstream in(text);
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    const std::string content = trim(raw.substr(0, raw.find('#')));
    if (content.empty()) continue;
    const size_t equals = content.find('=');
    const std::string where = name + ":" + std::to_string(line) + ": ";
    if (equals == std::string::npos)
      throw Error(where + "expected 'key = value', got '" + content + "'");
    const std::string key = trim(content.substr(0, equals));
    const std::string value = trim(content.substr(equals + 1));
    if (key.empty() || value.empty())
      throw Error(where + "empty key or value in '" + content + "'");
    for (char c : key)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        throw Error(where + "key '" + key + "' has characters other than letters, digits and _");
    if (file.values_.count(key) != 0)
      throw Error(where + "'" + key + "' set twice (first on line " +
                  std::to_string(file.values_[key].line) + ")");
    file.values_[key] = Entry{value, line};
  }
  return file;
}

const ParamFile::Entry& ParamFile::entry(const std::string& key) const {
  const auto found = values_.find(key);
  if (found == values_.end()) throw Error(name_ + ": missing parameter '" + key + "'");
  found->second.used = true;
  return found->second;
}

void ParamFile::fail(const Entry& entry, const std::string& message) const {
  throw Error(name_ + ":" + std::to_string(entry.line) + ": " + message);
}

#define TCA_SIM_GETTER(method, parser)                     \
  double ParamFile::method(const std::string& key) const { \
    const Entry& e = entry(key);                           \
    try {                                                  \
      return parser(e.value);                              \
    } catch (const Error& error) {                         \
      fail(e, key + ": " + error.what());                  \
    }                                                      \
  }
TCA_SIM_GETTER(seconds, parse_seconds)
TCA_SIM_GETTER(bytes_per_second, parse_bandwidth)
TCA_SIM_GETTER(bytes, parse_bytes)
#undef TCA_SIM_GETTER

double ParamFile::number(const std::string& key) const {
  const Entry& e = entry(key);
  try {
    const auto [value, unit] = number_and_unit(e.value);
    if (!unit.empty()) fail(e, key + ": '" + e.value + "' should be a plain number");
    return value;
  } catch (const Error& error) {
    if (std::string(error.what()).rfind(name_, 0) == 0) throw;
    fail(e, key + ": " + error.what());
  }
}

std::string ParamFile::word(const std::string& key) const { return entry(key).value; }

std::vector<int> ParamFile::dims(const std::string& key) const {
  const Entry& e = entry(key);
  std::vector<int> out;
  std::istringstream in(e.value);
  std::string part;
  while (std::getline(in, part, 'x')) {
    part = trim(part);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
        part.size() > 6 || std::stoi(part) < 1)
      fail(e, key + ": '" + e.value + "' is not a list of positive integers like 2x8");
    out.push_back(std::stoi(part));
  }
  if (out.empty()) fail(e, key + ": empty dimensions");
  return out;
}

void ParamFile::check_all_used() const {
  for (const auto& [key, e] : values_)
    if (!e.used) fail(e, "unknown parameter '" + key + "' for this fabric");
}

}  // namespace tca_sim
