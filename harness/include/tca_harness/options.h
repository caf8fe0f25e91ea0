// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// One option dialect for every tca program: CLI11 with the same size syntax, --json flag,
// repeatable options and help layout; parse errors and --help printed by one rank.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tca_harness {

class Cli {
 public:
  // `description` heads --help: "<program>: <what it does> (run: tca-run -n N <program>, or
  // mpirun -n N <program>)".
  explicit Cli(const std::string& description);

  // The CLI11 application, for options of any other kind (add their default with
  // ->capture_default_str(), as the helpers below do).
  CLI::App& app() { return app_; }

  // A byte count: digits with an optional suffix (4K, 64M, 1G, 2KiB; 1K = 1024), within
  // [min, max]; --help shows the default.
  CLI::Option* add_size(const std::string& flags, size_t& value, const std::string& help,
                        size_t min = 1, size_t max = SIZE_MAX);

  // A repeatable option ("-p a -p b"); `choices`, when not empty, are the accepted values.
  CLI::Option* add_repeatable(const std::string& flags, std::vector<std::string>& values,
                              const std::string& help,
                              const std::vector<std::string>& choices = {});

  // --json: one JSON object on stdout, the table on stderr (report.h, table.h).
  CLI::Option* add_json(bool& json);

  // Parses the command line, then runs `validate` (which may throw CLI::ValidationError).
  // nullopt: the program goes on. Otherwise the program should end (after tcaFinalize or
  // MPI_Finalize where it started them) with the returned code: 0 after --help, non-zero after a
  // bad option. Only `rank` 0 prints.
  std::optional<int> parse(int argc, char** argv, int rank,
                           const std::function<void()>& validate = {});

 private:
  CLI::App app_;
};

}  // namespace tca_harness
