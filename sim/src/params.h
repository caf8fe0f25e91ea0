// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Parameter files of fabric descriptions: one `key = value` a line, `#` starts a comment that
// names the seed figure (or the measurement) the value comes from. Values carry their unit:
// times (ns, us, ms, s), bandwidths (B/s, KB/s, MB/s, GB/s: powers of 1000), sizes (B, KiB,
// MiB, GiB), plain numbers, words and lists of integers ("2x8"). Every error names file:line.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tca_sim {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ParamFile {
 public:
  // Reads `path`; `name` is how errors call it (defaults to the path).
  static ParamFile load(const std::string& path);
  static ParamFile parse(const std::string& text, const std::string& name);

  const std::string& name() const { return name_; }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  double seconds(const std::string& key) const;
  double bytes_per_second(const std::string& key) const;
  double bytes(const std::string& key) const;
  double number(const std::string& key) const;
  std::string word(const std::string& key) const;
  std::vector<int> dims(const std::string& key) const;  // "2x8", "8x4x4", "16"
  // Fails naming the line of the first key that no getter asked for (a misspelt key).
  void check_all_used() const;

 private:
  struct Entry {
    std::string value;
    int line = 0;
    mutable bool used = false;
  };
  const Entry& entry(const std::string& key) const;
  [[noreturn]] void fail(const Entry& entry, const std::string& message) const;
  std::string name_;
  std::map<std::string, Entry> values_;
};

// "1.9us" -> 1.9e-6 and so on; throws Error (without a place) when the unit does not fit.
double parse_seconds(const std::string& text);
double parse_bandwidth(const std::string& text);
double parse_bytes(const std::string& text);

}  // namespace tca_sim
