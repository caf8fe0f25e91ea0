// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The harness's pieces that compute or format: statistics, sizes, tables, reports, options, how
// the job was started, control exchanges (over a stand-in for the bootstrap).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tca_harness/launch.h"
#include "tca_harness/options.h"
#include "tca_harness/ranks.h"
#include "tca_harness/report.h"
#include "tca_harness/sizes.h"
#include "tca_harness/stats.h"
#include "tca_harness/table.h"

namespace tca_harness {
namespace {

TEST(Stats, QuartilesAtPositionsNPlusOneTimesP) {
  // Positions (n+1)p = 2, 4, 6 of seven values: exact values, no interpolation.
  const Summary odd = summarize({7, 1, 6, 2, 5, 3, 4});
  EXPECT_EQ(odd.count, 7u);
  EXPECT_DOUBLE_EQ(odd.min, 1);
  EXPECT_DOUBLE_EQ(odd.first_quartile, 2);
  EXPECT_DOUBLE_EQ(odd.median, 4);
  EXPECT_DOUBLE_EQ(odd.third_quartile, 6);
  EXPECT_DOUBLE_EQ(odd.max, 7);
  // Four values: positions 1.25, 2.5, 3.75.
  const Summary even = summarize({40, 10, 30, 20});
  EXPECT_DOUBLE_EQ(even.first_quartile, 12.5);
  EXPECT_DOUBLE_EQ(even.median, 25);
  EXPECT_DOUBLE_EQ(even.third_quartile, 37.5);
}

TEST(Stats, MeanAndSampleStandardDeviation) {
  const Summary summary = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(summary.mean, 5);
  EXPECT_DOUBLE_EQ(summary.stddev, std::sqrt(32.0 / 7));  // squares sum to 32, n - 1 = 7
  EXPECT_DOUBLE_EQ(summarize({3}).stddev, 0);
}

TEST(Stats, HarmonicMeanAndItsStandardDeviation) {
  // Reciprocals 1, 1/2, 1/4: mean 7/12, so H = 12/7; deviations 5/12, -1/12, -4/12 square to
  // 42/144; harmonic_stddev = sqrt(42/144) / 2 * H^2.
  const Summary summary = summarize({1, 2, 4});
  const double harmonic = 12.0 / 7;
  EXPECT_DOUBLE_EQ(summary.harmonic_mean, harmonic);
  EXPECT_NEAR(summary.harmonic_stddev, std::sqrt(42.0 / 144) / 2 * harmonic * harmonic, 1e-12);
  EXPECT_DOUBLE_EQ(summarize({5, 5}).harmonic_stddev, 0);
  EXPECT_TRUE(std::isnan(summarize({1, 0}).harmonic_mean));
}

TEST(Stats, EmptyAndHelpers) {
  EXPECT_EQ(summarize({}).count, 0u);
  EXPECT_TRUE(std::isnan(summarize({}).median));
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(minimum({3, 1, 2}), 1);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3}, 0), 1);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3}, 1), 3);
}

TEST(Sizes, SuffixesAreBinary) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("64M"), size_t{64} << 20);
  EXPECT_EQ(parse_size("1G"), size_t{1} << 30);
  EXPECT_EQ(parse_size("2KiB"), 2048u);
  EXPECT_EQ(parse_size("8kb"), 8192u);
  EXPECT_FALSE(parse_size("four").has_value());
  EXPECT_FALSE(parse_size("4Q").has_value());
  EXPECT_FALSE(parse_size("-5").has_value());
  EXPECT_FALSE(parse_size("").has_value());
}

TEST(Sizes, FormatAndSeries) {
  EXPECT_EQ(format_size(8), "8 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(3 << 20), "3 MiB");
  EXPECT_EQ(format_size(1536), "1536 B");
  EXPECT_EQ(size_series(8, 64, 2), (std::vector<size_t>{8, 16, 32, 64}));
  EXPECT_EQ(size_series(8, 100, 8), (std::vector<size_t>{8, 64}));
  EXPECT_EQ(size_series(SIZE_MAX / 2, SIZE_MAX, 4), (std::vector<size_t>{SIZE_MAX / 2}));
}

// What a table printed.
std::string printed(const std::function<void(const Table&)>& print, std::vector<Column> columns,
                    bool active = true) {
  FILE* file = std::tmpfile();
  Table table(file, active);
  table.set_columns(std::move(columns));
  print(table);
  std::rewind(file);
  std::string text;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) text += static_cast<char>(c);
  std::fclose(file);
  return text;
}

TEST(Table, RowsAlignUnderTheCommentedHeader) {
  const std::vector<Column> columns = {{"path", 8, Align::kLeft},
                                       {"size", 6},
                                       {"us", 8, Align::kRight, 2, "(x)"},
                                       {"notes", 0, Align::kLeft, 3, "", "  "}};
  EXPECT_EQ(printed([](const Table& t) { t.header(); }, columns),
            "# path     size       us  notes\n");
  EXPECT_EQ(printed([](const Table& t) { t.units(); }, columns), "#                    (x)\n");
  EXPECT_EQ(printed([](const Table& t) { t.row({"a.b", size_t{64}, 1.5, ""}); }, columns),
            "a.b          64     1.50\n");
  EXPECT_EQ(printed([](const Table& t) { t.row({"a.b", -3, 2.0, "ll x4"}); }, columns),
            "a.b          -3     2.00  ll x4\n");
  EXPECT_EQ(printed([](const Table& t) { t.comment(format("%d ranks", 2)); }, columns),
            "# 2 ranks\n");
  EXPECT_EQ(printed([](const Table& t) { t.comment("x"); }, columns, false), "");
}

TEST(Report, FieldsRowsThenNotes) {
  Report report("tca-x");
  report.set("ranks", 2);
  report.add_row({{"bytes", 8}});
  EXPECT_EQ(report.document().dump(), R"({"benchmark":"tca-x","ranks":2,"rows":[{"bytes":8}]})");
  report.add_note("ref.nccl: skipped");
  report.add_note("ref.nccl: skipped");
  report.set("ranks", 3);
  EXPECT_EQ(
      report.document().dump(),
      R"({"benchmark":"tca-x","ranks":3,"rows":[{"bytes":8}],"notes":["ref.nccl: skipped"]})");
}

// print() adds where, when and how the run was made; document() stays the program's own.
TEST(Report, RunDescription) {
  const nlohmann::ordered_json run = Report::run_description();
  ASSERT_TRUE(run.contains("date") && run.contains("host") && run.contains("cpu") &&
              run.contains("command_line"));
  const std::string date = run["date"];
  EXPECT_EQ(date.size(), 20u) << date;  // 2026-11-23T23:05:00Z
  EXPECT_EQ(date[10], 'T');
  EXPECT_EQ(date.back(), 'Z');
  EXPECT_NE(run["cpu"].get<std::string>().find("hardware threads"), std::string::npos);
  EXPECT_NE(run["command_line"].get<std::string>().find("tca_harness_tests"), std::string::npos);
}

// Parses `arguments` (after the program name) with rank 1, which prints nothing.
std::optional<int> parse(Cli& cli, std::vector<std::string> arguments,
                         const std::function<void()>& validate = {}) {
  arguments.insert(arguments.begin(), "program");
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  return cli.parse(static_cast<int>(argv.size()), argv.data(), 1, validate);
}

TEST(Options, SizesRepeatablesAndJson) {
  Cli cli("program: test");
  size_t bytes = 8;
  std::vector<std::string> paths;
  bool json = false;
  cli.add_size("-b,--bytes", bytes, "Size", 1, size_t{1} << 30);
  cli.add_repeatable("-p,--path", paths, "Paths", {"a", "b"});
  cli.add_json(json);
  EXPECT_FALSE(parse(cli, {"-b", "64K", "-p", "a", "-p", "b", "--json"}).has_value());
  EXPECT_EQ(bytes, size_t{64} << 10);
  EXPECT_EQ(paths, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(json);
}

TEST(Options, RefusalsEndTheProgramWithAnError) {
  Cli cli("program: test");
  size_t bytes = 8;
  std::vector<std::string> paths;
  cli.add_size("-b,--bytes", bytes, "Size", 1, 1024);
  cli.add_repeatable("-p,--path", paths, "Paths", {"a"});
  EXPECT_NE(parse(cli, {"-b", "2K"}).value_or(0), 0);  // over the range
  EXPECT_NE(parse(cli, {"-p", "z"}).value_or(0), 0);   // not a choice
  EXPECT_NE(parse(cli, {"--nope"}).value_or(0), 0);
  EXPECT_NE(parse(cli, {}, [] { throw CLI::ValidationError("-b", "refused"); }).value_or(0), 0);
  EXPECT_EQ(parse(cli, {"--help"}), 0);
}

// Sets the variables given for the life of the object; every launcher variable the harness
// reads is unset first, and all are restored at the end.
using Variables = std::vector<std::pair<const char*, const char*>>;

class Environment {
 public:
  explicit Environment(const Variables& values) {
    for (const char* name :
         {"TCA_BOOTSTRAP", "TCA_RANK", "TCA_ROOT", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
          "OMPI_HARNESS_TEST", "OMPI_MCA_harness_test", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
          "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK", "RANK", "SLURM_PROCID"}) {
      if (const char* old = std::getenv(name)) saved_.emplace_back(name, old);
      unsetenv(name);
      names_.push_back(name);
    }
    for (const auto& [name, value] : values) setenv(name, value, 1);
  }
  ~Environment() {
    for (const char* name : names_) unsetenv(name);
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  std::vector<const char*> names_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

std::string missing(const Variables& variables) {
  const Environment environment(variables);
  return mpi_launch_missing();
}

int rank(const Variables& variables) {
  const Environment environment(variables);
  return launch_rank();
}

TEST(Launch, MpiLaunchersAreRecognized) {
  EXPECT_EQ(missing({{"OMPI_COMM_WORLD_SIZE", "2"}}), "");
  EXPECT_EQ(missing({{"PMI_SIZE", "4"}}), "");
  EXPECT_EQ(missing({{"MV2_COMM_WORLD_SIZE", "4"}}), "");
  EXPECT_EQ(missing({{"PMIX_RANK", "1"}, {"OMPI_HARNESS_TEST", "1"}}), "");
  EXPECT_EQ(missing({{"TCA_BOOTSTRAP", "mpi"}}), "");
  // srun's PMIx alone, tca-run, torchrun, another bootstrap, nothing: no MPI.
  EXPECT_NE(missing({{"PMIX_RANK", "1"}}), "");
  EXPECT_NE(missing({{"PMIX_RANK", "1"}, {"OMPI_MCA_harness_test", "1"}}), "");
  EXPECT_NE(missing({{"TCA_RANK", "0"}, {"TCA_ROOT", "h:1"}}), "");
  EXPECT_NE(missing({{"RANK", "0"}}), "");
  EXPECT_NE(missing({}), "");
  // tca's own start wins over variables inherited from an outer mpirun.
  EXPECT_NE(missing({{"OMPI_COMM_WORLD_SIZE", "2"}, {"TCA_RANK", "1"}}), "");
  const std::string chosen = missing({{"OMPI_COMM_WORLD_SIZE", "2"}, {"TCA_BOOTSTRAP", "tcp"}});
  EXPECT_NE(chosen.find("TCA_BOOTSTRAP=tcp"), std::string::npos) << chosen;
}

TEST(Launch, RankBeforeInitFromTheLauncher) {
  EXPECT_EQ(rank({}), 0);
  EXPECT_EQ(rank({{"TCA_RANK", "3"}}), 3);
  EXPECT_EQ(rank({{"RANK", "2"}}), 2);
  EXPECT_EQ(rank({{"OMPI_COMM_WORLD_RANK", "5"}}), 5);
  EXPECT_EQ(rank({{"SLURM_PROCID", "7"}}), 7);
  EXPECT_EQ(rank({{"TCA_RANK", "x"}, {"PMI_RANK", "1"}}), 1);  // not a number
}

// A bootstrap stand-in: this process is rank `rank`; the other ranks' contributions to the
// allgathers, in call order, are `rounds` (this rank's own entries are ignored).
Control fake_control(int rank, int size, std::vector<std::vector<std::vector<uint8_t>>> rounds) {
  Control control;
  control.rank = rank;
  control.size = size;
  auto state = std::make_shared<std::pair<size_t, decltype(rounds)>>(0, std::move(rounds));
  control.allgather = [state, rank, size](const void* mine, void* all, size_t bytes) {
    const auto& round = state->second.at(state->first++);
    auto* out = static_cast<uint8_t*>(all);
    for (int r = 0; r < size; ++r) {
      std::vector<uint8_t> value = round.at(static_cast<size_t>(r));
      value.resize(bytes, 0);
      std::memcpy(out + r * bytes, r == rank ? mine : value.data(), bytes);
    }
  };
  return control;
}

std::vector<uint8_t> bytes_of(uint64_t value) {
  std::vector<uint8_t> bytes(sizeof value);
  std::memcpy(bytes.data(), &value, sizeof value);
  return bytes;
}

TEST(Ranks, AllgatherBytesOfDifferentLengths) {
  const std::vector<uint8_t> zero = {1, 2, 3};
  const std::vector<uint8_t> two = {9};
  const Control control =
      fake_control(1, 3, {{bytes_of(3), {}, bytes_of(1)}, {{1, 2, 3}, {}, {9, 0, 0}}});
  const std::vector<std::vector<uint8_t>> all = allgather_bytes({7, 8}, control);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], zero);
  EXPECT_EQ(all[1], (std::vector<uint8_t>{7, 8}));
  EXPECT_EQ(all[2], two);
}

TEST(Ranks, AgreementNeedsEveryRank) {
  EXPECT_TRUE(all_ranks(true, fake_control(0, 2, {{{}, {1}}})));
  EXPECT_FALSE(all_ranks(true, fake_control(0, 2, {{{}, {0}}})));
  EXPECT_EQ(agreed_reason("", fake_control(0, 2, {{{}, {0}}}), "elsewhere"), "elsewhere");
  EXPECT_EQ(agreed_reason("here", fake_control(0, 2, {{{}, {1}}}), "elsewhere"), "here");
  EXPECT_EQ(agreed_reason("", fake_control(0, 2, {{{}, {1}}}), "elsewhere"), "");
}

}  // namespace
}  // namespace tca_harness
