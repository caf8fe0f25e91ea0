// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/report.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>

namespace tca_harness {

GpuLister gpu_lister = nullptr;

Report::Report(const std::string& program, bool active, const std::string& key)
    : head_({{key, program}}), active_(active) {}

void Report::set(const std::string& key, nlohmann::ordered_json value) {
  head_[key] = std::move(value);
}

void Report::add_row(nlohmann::ordered_json row) { rows_.push_back(std::move(row)); }

void Report::add_note(const std::string& text) {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) notes_.push_back(text);
}

namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "";
}

// "<model name>, <n> hardware threads" (the model from /proc/cpuinfo where it says one).
std::string cpu_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model;
  while (model.empty() && std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      model = line.substr(line.find(':') + 2);
  }
  const std::string threads =
      std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
  return model.empty() ? threads : model + ", " + threads;
}

// The program's command line as it was started (/proc/self/cmdline), "" where unreadable.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string command;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    std::string argument = all.substr(start, end - start);
    if (argument.empty() || argument.find_first_of(" \t'\"") != std::string::npos)
      argument = "'" + argument + "'";
    command += (command.empty() ? "" : " ") + argument;
    start = end + 1;
  }
  return command;
}

}  // namespace

nlohmann::ordered_json Report::document() const { return with_rows(head_); }

nlohmann::ordered_json Report::with_rows(nlohmann::ordered_json document) const {
  document["rows"] = nlohmann::ordered_json::array();
  for (const nlohmann::ordered_json& row : rows_) document["rows"].push_back(row);
  if (!notes_.empty()) document["notes"] = notes_;
  return document;
}

nlohmann::ordered_json Report::run_description() {
  nlohmann::ordered_json run = {
      {"date", utc_now()}, {"host", host_name()}, {"cpu", cpu_description()}};
  if (gpu_lister != nullptr) {
    const std::vector<std::string> gpus = gpu_lister();
    if (!gpus.empty()) run["gpus"] = gpus;
  }
  run["command_line"] = command_line();
  return run;
}

void Report::print() const {
  if (!active_) return;
  nlohmann::ordered_json head = head_;
  const nlohmann::ordered_json run = run_description();
  for (auto item = run.cbegin(); item != run.cend(); ++item) {
    if (!head.contains(item.key())) head[item.key()] = *item;
  }
  std::cout << with_rows(std::move(head)).dump(2) << std::endl;
}

void skip_note(const Table& table, Report& report, const std::string& text) {
  table.comment(text);
  report.add_note(text);
}

}  // namespace tca_harness
