// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/options.h"

namespace tca_harness {

Cli::Cli(const std::string& description) : app_(description) {}

CLI::Option* Cli::add_size(const std::string& flags, size_t& value, const std::string& help,
                           size_t min, size_t max) {
  return app_.add_option(flags, value, help)
      ->transform(CLI::AsSizeValue(false))  // 1K = 1024
      ->check(CLI::Range(min, max))
      ->capture_default_str();
}

CLI::Option* Cli::add_repeatable(const std::string& flags, std::vector<std::string>& values,
                                 const std::string& help, const std::vector<std::string>& choices) {
  CLI::Option* option = app_.add_option(flags, values, help);
  if (!choices.empty()) option->check(CLI::IsMember(choices));
  return option;
}

CLI::Option* Cli::add_json(bool& json) {
  return app_.add_flag("--json", json,
                       "Print one JSON object on stdout (the table goes to stderr)");
}

std::optional<int> Cli::parse(int argc, char** argv, int rank,
                              const std::function<void()>& validate) {
  try {
    app_.parse(argc, argv);
    if (validate) validate();
  } catch (const CLI::ParseError& error) {
    return rank == 0 ? app_.exit(error) : error.get_exit_code();
  }
  return std::nullopt;
}

}  // namespace tca_harness
