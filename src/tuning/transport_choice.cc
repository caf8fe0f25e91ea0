// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tuning/transport_choice.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/cache_file.h"
#include "base/error.h"
#include "base/settings.h"

namespace tca {

const std::vector<uint64_t>& choice_sizes() {
  static const std::vector<uint64_t> sizes = {8, 512, 8 << 10, 64 << 10, 512 << 10, 4 << 20};
  return sizes;
}

ChoiceTable choose_by_size(const std::vector<uint64_t>& sizes, const std::vector<int>& candidates,
                           const std::vector<std::vector<double>>& micros, double margin) {
  ChoiceTable table;
  for (size_t s = 0; s < sizes.size(); ++s) {
    size_t best = 0;
    for (size_t c = 1; c < candidates.size(); ++c)
      if (micros[c][s] * (1.0 + margin) < micros[best][s]) best = c;
    const int id = candidates[best];
    if (table.steps.empty() || table.steps.back().value != id)
      table.steps.push_back({table.steps.empty() ? 0 : sizes[s], id});
  }
  return table;
}

std::string encode_table(const ChoiceTable& table) {
  std::string text;
  for (const ChoiceStep& step : table.steps)
    text += fmt::format("{}{}:{}", text.empty() ? "" : ",", step.from_bytes, step.value);
  return text;
}

tcaResult decode_table(const std::string& text, int transports, ChoiceTable* out) {
  ChoiceTable table;
  if (!text.empty() && text.back() == ',')
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "'{}' is not a transport choice table (ends in ',')",
             text);
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    unsigned long long from = 0;
    int id = -1;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%llu:%d%c", &from, &id, &tail) != 2 || id < 0 ||
        id >= transports ||
        (table.steps.empty() ? from != 0 : from <= table.steps.back().from_bytes))
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "'{}' is not a transport choice table (at '{}')", text,
               item);
    table.steps.push_back({from, id});
  }
  if (table.steps.empty())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "'{}' is not a transport choice table (empty)", text);
  *out = std::move(table);
  return TCA_SUCCESS;
}

namespace {
constexpr const char* kCacheHeader = "tca-transport-choice 1";
}

tcaResult ChoiceCache::load(const std::string& path, int transports) {
  tables_.clear();
  std::ifstream file(path);
  std::string line;
  if (!file || !std::getline(file, line) || line != kCacheHeader) return TCA_SUCCESS;
  for (int number = 2; std::getline(file, line); ++number) {
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    ChoiceTable table;
    if (space == std::string::npos ||
        decode_table(line.substr(space + 1), transports, &table) != TCA_SUCCESS) {
      clear_last_error();
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
               "{}:{}: malformed transport choice line '{}' (delete "
               "the file to measure again)",
               path, number, line);
    }
    tables_[line.substr(0, space)] = table;
  }
  return TCA_SUCCESS;
}

const ChoiceTable* ChoiceCache::find(const std::string& key) const {
  const auto found = tables_.find(key);
  return found != tables_.end() ? &found->second : nullptr;
}

tcaResult ChoiceCache::save(const std::string& path) const {
  TCA_CHECK(make_parent_folders(path));
  const std::string temporary = fmt::format("{}.{}.tmp", path, getpid());
  {
    std::ofstream file(temporary);
    file << kCacheHeader << "\n";
    for (const auto& [key, table] : tables_) file << key << " " << encode_table(table) << "\n";
    if (!file) TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot write {}", temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot rename {} to {}: {}", temporary, path,
             std::strerror(errno));
  }
  return TCA_SUCCESS;
}

std::string choice_cache_path() { return cache_file("TCA_CHOICE_FILE", "choice", ".txt"); }

}  // namespace tca
