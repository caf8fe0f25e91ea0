// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Every environment setting the library reads, declared once (name, default, accepted values,
// meaning) in the table of settings.cc and read through the typed readers below, which refuse a
// bad value with a message that names the setting, the value and what it accepts, as NCCL's
// parameters do. docs/SETTINGS.md shows the same table; a unit test keeps the two equal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tca/tca.h"

namespace tca {

enum class SettingKind {
  kCount,   // a whole number in [min, max]
  kChoice,  // one of the words in `choices` ("a|b|c")
  kText,    // any text (a path, a name); `choices` describes it
};

struct SettingSpec {
  const char* name;
  SettingKind kind;
  const char* default_text;  // "" when unset means something other than a value
  int64_t min;
  int64_t max;
  const char* choices;  // kChoice: "a|b|c"; kText: what the text is
  const char* meaning;
};

const std::vector<SettingSpec>& settings_table();
// The table's entry for `name`, or null.
const SettingSpec* find_setting(const char* name);

// The value of `name` in the environment, or its default where unset or empty (*set says which).
// A name missing from the table, or a value it does not accept, is an error.
tcaResult setting_count(const char* name, int64_t* out, bool* set = nullptr);
tcaResult setting_choice(const char* name, std::string* out, bool* set = nullptr);
tcaResult setting_text(const char* name, std::string* out, bool* set = nullptr);

// Parses `text` as a value of `spec` (for the readers and their tests).
tcaResult parse_count(const SettingSpec& spec, const std::string& text, int64_t* out);
tcaResult parse_choice(const SettingSpec& spec, const std::string& text);

}  // namespace tca
