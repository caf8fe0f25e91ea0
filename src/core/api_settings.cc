// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The public C API of the settings table (tcaGetSettingCount, tcaGetSetting): every setting
// with the value in effect and where it came from, as tca-info --settings prints them.
#include <fmt/format.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/settings.h"

namespace {

// The strings a tcaSettingInfo points to: this thread's, valid until its next call.
struct SettingText {
  std::string value;
  std::string accepted;
};
thread_local SettingText g_text;

std::string accepted(const tca::SettingSpec& spec) {
  switch (spec.kind) {
    case tca::SettingKind::kCount:
      return spec.max == INT64_MAX ? fmt::format("a whole number >= {}", spec.min)
                                   : fmt::format("a whole number in [{}, {}]", spec.min, spec.max);
    case tca::SettingKind::kChoice:
      return fmt::format("one of {}", spec.choices);
    case tca::SettingKind::kText:
      break;
  }
  return spec.choices;
}

// The value in effect (the environment's, else the default) through the setting's own reader;
// false where the environment's value is refused (then `out` is that value as written).
bool value_in_effect(const tca::SettingSpec& spec, std::string* out, bool* from_environment) {
  tcaResult result = TCA_SUCCESS;
  switch (spec.kind) {
    case tca::SettingKind::kCount: {
      int64_t value = 0;
      result = tca::setting_count(spec.name, &value, from_environment);
      *out = *from_environment || *spec.default_text != '\0' ? std::to_string(value) : "";
      break;
    }
    case tca::SettingKind::kChoice:
      result = tca::setting_choice(spec.name, out, from_environment);
      break;
    case tca::SettingKind::kText:
      result = tca::setting_text(spec.name, out, from_environment);
      break;
  }
  if (result == TCA_SUCCESS) return true;
  const char* raw = std::getenv(spec.name);
  *out = raw != nullptr ? raw : "";
  *from_environment = true;
  tca::clear_last_error();  // a refused value is an answer here; tcaInit reports it
  return false;
}

}  // namespace

extern "C" {

tcaResult tcaGetSettingCount(int* count) {
  if (count == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "count is NULL");
  *count = static_cast<int>(tca::settings_table().size());
  return TCA_SUCCESS;
}

tcaResult tcaGetSetting(int index, tcaSettingInfo* info) {
  const auto& table = tca::settings_table();
  if (info == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "info is NULL");
  if (index < 0 || static_cast<size_t>(index) >= table.size())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "setting index {} outside [0, {})", index, table.size());
  const tca::SettingSpec& spec = table[static_cast<size_t>(index)];
  bool from_environment = false;
  const bool valid = value_in_effect(spec, &g_text.value, &from_environment);
  g_text.accepted = accepted(spec);
  info->name = spec.name;
  info->value = g_text.value.c_str();
  info->default_value = spec.default_text;
  info->accepted = g_text.accepted.c_str();
  info->meaning = spec.meaning;
  info->from_environment = from_environment ? 1 : 0;
  info->valid = valid ? 1 : 0;
  return TCA_SUCCESS;
}

}  // extern "C"
