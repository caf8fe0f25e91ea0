// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-info: what this build of tca is and what it would do here, as ucx_info and nvshmem-info
// tell of theirs — the release, every setting with its value and where it came from, the
// transports that reach each rank, and the choices it makes by size (the fixed rules of every
// choice, transport per peer and memory kinds, collective algorithm per size). Rank 0 prints;
// public API only, no MPI: the ranks find each other through tca's bootstrap (mpirun, tca-run,
// torchrun, or one rank alone).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "tca/tca_coll.h"
#include "tca_harness/launch.h"
#include "tca_harness/options.h"
#include "tca_harness/report.h"
#include "tca_harness/table.h"

namespace {

using tca_harness::Align;
using tca_harness::Report;
using tca_harness::Table;

struct Options {
  bool settings = false;
  bool transports = false;
  bool choices = false;
  bool json = false;
};

// Every setting; false where one of the environment's values is refused.
bool print_settings(Table& table, Report& report) {
  int count = 0;
  tcaGetSettingCount(&count);
  table.comment("settings (docs/SETTINGS.md): the value in effect and where it came from");
  table.set_columns({{"setting", 28, Align::kLeft},
                     {"value", 10, Align::kLeft},
                     {"from", 11, Align::kLeft},
                     {"accepts", 0, Align::kLeft}});
  table.header();
  bool all_valid = true;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int i = 0; i < count; ++i) {
    tcaSettingInfo info{};
    if (tcaGetSetting(i, &info) != TCA_SUCCESS) return false;
    const std::string from = !info.valid             ? "REFUSED"
                             : info.from_environment ? "environment"
                                                     : "default";
    const std::string value = *info.value != '\0' ? info.value : "(unset)";
    table.row({info.name, value, from, info.accepted});
    rows.push_back({{"name", info.name},
                    {"value", info.value},
                    {"from", from},
                    {"default", info.default_value},
                    {"accepts", info.accepted},
                    {"meaning", info.meaning}});
    all_valid = all_valid && info.valid;
  }
  report.set("settings", rows);
  return all_valid;
}

struct PathName {
  tcaPath path;
  const char* name;
};
constexpr PathName kPaths[] = {
    {TCA_PATH_SHM, "shm"},         {TCA_PATH_MPI, "mpi"},
    {TCA_PATH_CUDA, "cuda"},       {TCA_PATH_CUDA_CE, "cuda_ce"},
    {TCA_PATH_CUDA_SM, "cuda_sm"}, {TCA_PATH_CUDA_RESIDENT, "cuda_resident"},
    {TCA_PATH_UCX, "ucx"}};

// Per peer of rank 0: the transport of host traffic and every path that reaches it.
void print_transports(int size, Table& table, Report& report) {
  table.comment("transports from rank 0: the one for host memory, and every path that reaches");
  table.set_columns({{"peer", 5}, {"host traffic", 12, Align::kLeft}, {"paths", 0, Align::kLeft}});
  table.header();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int peer = 0; peer < size; ++peer) {
    const char* control = "-";
    if (tcaPeerTransport(peer, &control) != TCA_SUCCESS) control = "none";
    std::string paths;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const PathName& path : kPaths) {
      int available = 0;
      if (tcaPathAvailable(path.path, peer, &available) == TCA_SUCCESS && available) {
        paths += (paths.empty() ? "" : " ") + std::string(path.name);
        list.push_back(path.name);
      }
    }
    table.row({peer, control, paths.empty() ? "(none)" : paths});
    rows.push_back({{"peer", peer}, {"host_traffic", control}, {"paths", list}});
  }
  report.set("transports", rows);
}

// The size tables of the transport choice, per peer and memory kinds.
void print_transport_choices(int size, Table& table, nlohmann::ordered_json* rows) {
  table.comment("choice of transport by size, from rank 0 (FROM:NAME; empty: the default alone)");
  table.set_columns({{"peer", 5}, {"src>dst", 8, Align::kLeft}, {"choice", 0, Align::kLeft}});
  table.header();
  for (int peer = 0; peer < size; ++peer) {
    for (tcaMemKind local : {TCA_MEM_CPU, TCA_MEM_GPU}) {
      for (tcaMemKind remote : {TCA_MEM_CPU, TCA_MEM_GPU}) {
        const char* name = nullptr;
        const char* sizes = nullptr;
        if (tcaAutoTransport(peer, local, remote, 8, &name, &sizes) != TCA_SUCCESS) continue;
        const std::string kinds = std::string(local == TCA_MEM_GPU ? "gpu" : "cpu") + ">" +
                                  (remote == TCA_MEM_GPU ? "gpu" : "cpu");
        const std::string text = *sizes != '\0' ? sizes : std::string("0:") + name;
        table.row({peer, kinds, text});
        rows->push_back({{"peer", peer}, {"kinds", kinds}, {"table", text}});
      }
    }
  }
}

// The collective algorithm per size at this rank count: one row per run of sizes (powers of
// two from 8 B to 1 GiB) that gets the same algorithm.
void print_collective_choices(int size, Table& table, nlohmann::ordered_json* rows) {
  table.comment("choice of collective algorithm by size at " + std::to_string(size) + " ranks");
  table.set_columns({{"collective", 10, Align::kLeft},
                     {"memory", 6, Align::kLeft},
                     {"from (B)", 12},
                     {"algorithm", 0, Align::kLeft}});
  table.header();
  const std::pair<tcaCollKind, const char*> kinds[] = {{TCA_COLL_ALLREDUCE, "allreduce"},
                                                       {TCA_COLL_ALLGATHER, "allgather"}};
  for (const auto& [kind, kind_name] : kinds) {
    for (tcaMemKind memory : {TCA_MEM_CPU, TCA_MEM_GPU}) {
      std::string previous;
      for (size_t bytes = 8; bytes <= (size_t{1} << 30); bytes *= 2) {
        tcaCollAlgorithm algorithm = TCA_COLL_AUTO;
        if (tcaCollChooseAlgorithm(kind, memory, bytes, size, &algorithm) != TCA_SUCCESS) break;
        const std::string name = tcaCollAlgorithmName(algorithm);
        if (name == previous) continue;
        previous = name;
        const char* memory_name = memory == TCA_MEM_GPU ? "gpu" : "cpu";
        table.row({kind_name, memory_name, static_cast<uint64_t>(bytes), name});
        rows->push_back({{"collective", kind_name},
                         {"memory", memory_name},
                         {"from_bytes", bytes},
                         {"algorithm", name}});
      }
    }
  }
}

// The fixed rules of every choice by size (tuning/rules.h in the library); needs no tcaInit.
bool print_rules(Table& table, Report& report) {
  int count = 0;
  if (tcaGetChoiceRuleCount(&count) != TCA_SUCCESS) return false;
  table.comment(
      "fixed rules of the choices by size (in a case, the first that fits the size wins)");
  table.set_columns({{"choice", 24, Align::kLeft},
                     {"when", 28, Align::kLeft},
                     {"up to (B)", 12},
                     {"pick", 0, Align::kLeft}});
  table.header();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int i = 0; i < count; ++i) {
    tcaChoiceRule rule{};
    if (tcaGetChoiceRule(i, &rule) != TCA_SUCCESS) return false;
    const std::string up_to =
        rule.max_bytes == SIZE_MAX ? "any" : std::to_string(static_cast<uint64_t>(rule.max_bytes));
    table.row({rule.choice, rule.when, up_to, rule.pick});
    rows.push_back(
        {{"choice", rule.choice},
         {"when", rule.when},
         {"max_bytes", rule.max_bytes == SIZE_MAX ? nlohmann::ordered_json(nullptr)
                                                  : nlohmann::ordered_json(rule.max_bytes)},
         {"pick", rule.pick}});
  }
  report.set("choice_rules", rows);
  return true;
}

// The first comment line and the report's head: the release and, where tca started, the ranks
// and the bootstrap that joined them.
void print_head(bool started, const Table& table, Report& report) {
  int major = 0, minor = 0, patch = 0;
  tcaGetVersion(&major, &minor, &patch);
  const std::string release =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  report.set("version", release);
  std::string head = "tca " + release + " (headers " TCA_VERSION_STRING ")";
  int size = 0;
  const char* name = "?";
  const char* reason = "?";
  if (started && tcaSize(&size) == TCA_SUCCESS && tcaBootstrapInfo(&name, &reason) == TCA_SUCCESS) {
    head += ", " + std::to_string(size) + " ranks, bootstrap " + name + " (" + reason + ")";
    report.set("ranks", size);
    report.set("bootstrap", {{"name", name}, {"reason", reason}});
  }
  table.comment(head);
}

// The ranks and the choices they make; needs tcaInit. False where a call failed.
bool print_ranks(const Options& options, Table& table, Report& report) {
  int size = 0;
  if (tcaSize(&size) != TCA_SUCCESS) return false;
  if (options.transports) print_transports(size, table, report);
  if (options.choices) {
    nlohmann::ordered_json transport_rows = nlohmann::ordered_json::array();
    nlohmann::ordered_json collective_rows = nlohmann::ordered_json::array();
    print_transport_choices(size, table, &transport_rows);
    print_collective_choices(size, table, &collective_rows);
    report.set("transport_choices", transport_rows);
    report.set("collective_choices", collective_rows);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int rank = tca_harness::launch_rank();  // who prints before tcaInit
  Options options;
  tca_harness::Cli cli(
      "tca-info: the release, settings, transports and choices by size of this build of tca "
      "(run: tca-info, or tca-run -n N tca-info / mpirun -n N tca-info to see N ranks' "
      "transports)");
  cli.app().add_flag("--settings", options.settings, "every setting, its value and its origin");
  cli.app().add_flag("--transports", options.transports, "the paths that reach each rank");
  cli.app().add_flag("--choices", options.choices,
                     "the choices by size: transport, algorithm, GPU protocol, engine");
  cli.add_json(options.json);
  if (auto code = cli.parse(argc, argv, rank)) return *code;
  if (!options.settings && !options.transports && !options.choices)
    options.settings = options.transports = options.choices = true;
  Table table(options.json, rank == 0);
  Report report("tca-info", options.json && rank == 0, "tool");
  // Only the ranks' part starts tca: the settings are shown even where tcaInit refuses them.
  const bool ranks = options.transports || options.choices;
  if (ranks && tcaInit() != TCA_SUCCESS) {
    if (rank == 0) std::fprintf(stderr, "tca-info: tcaInit: %s\n", tcaGetLastErrorMessage());
    print_head(false, table, report);
    if (options.settings) print_settings(table, report);
    if (options.choices) print_rules(table, report);
    report.print();
    return 1;
  }
  print_head(ranks, table, report);
  int status = 0;
  if (options.settings && !print_settings(table, report)) status = 1;
  if (options.choices && !print_rules(table, report)) status = 1;
  if (ranks) {
    if (!print_ranks(options, table, report)) status = 1;
    if (tcaFinalize() != TCA_SUCCESS) status = 1;
  }
  report.print();
  return status;
}
