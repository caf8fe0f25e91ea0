// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-sim: the seeds' fabrics as a calibrated SimGrid model (docs/SIM.md).
//   tca-sim calibrate [--json]
//   tca-sim replay --trace DIR --fabric NAME [--nodes N] [--mapping block|cyclic|K,K,...]
//   [--segments] [--json] tca-sim scale --fabric NAME|all --pattern NAME|all [--min-nodes 2]
//   [--max-nodes 1024] [--json] tca-sim route --fabric NAME --nodes N --from A --to B tca-sim
//   placements --fabric NAME --ranks R [--pattern allreduce|allgather] [--bytes B] [--json]
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "calibrate.h"
#include "fabric.h"
#include "patterns.h"
#include "placements.h"
#include "tca_harness/report.h"
#include "tca_harness/table.h"
#include "trace_reader.h"

#ifndef TCA_SIM_FABRIC_DIR
#define TCA_SIM_FABRIC_DIR "sim/fabrics"
#endif

namespace tca_sim {
namespace {

using tca_harness::Align;
using tca_harness::Report;
using tca_harness::Table;

std::string fmt(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

int run_calibrate(const std::string& dir, bool json) {
  const std::vector<CalibrationRow> rows = calibrate(dir);
  Table table(json);
  Report report("tca-sim");
  report.set("command", "calibrate");
  report.set("fabrics", dir);
  report.set("tolerance", kCalibrationTolerance);
  table.comment("calibration: every seed figure against the model's value (tolerance +-10%)");
  table.set_columns({{"figure", 62, Align::kLeft},
                     {"seed", 12},
                     {"model", 10},
                     {"unit", 5, Align::kLeft},
                     {"error", 8, Align::kRight, 1, "(%)"},
                     {"ok", 3},
                     {"source", 0, Align::kLeft}});
  table.header();
  int failed = 0;
  for (const CalibrationRow& r : rows) {
    std::string seed = fmt("%.4g", r.seed);
    if (r.kind == CalibrationRow::kRange)
      seed = fmt("%.4g", r.seed) + "-" + fmt("%.4g", r.seed_high);
    if (r.kind == CalibrationRow::kAtLeast) seed = ">=" + fmt("%.3g", r.seed);
    table.row({r.figure, seed, fmt("%.4g", r.model), r.unit, 100.0 * r.error, r.pass ? "yes" : "NO",
               r.source});
    report.add_row(nlohmann::ordered_json{{"figure", r.figure},
                                          {"source", r.source},
                                          {"unit", r.unit},
                                          {"kind", r.kind == CalibrationRow::kValue   ? "value"
                                                   : r.kind == CalibrationRow::kRange ? "range"
                                                                                      : "at_least"},
                                          {"seed", r.seed},
                                          {"seed_high", r.seed_high},
                                          {"model", r.model},
                                          {"error", r.error},
                                          {"pass", r.pass}});
    failed += r.pass ? 0 : 1;
  }
  table.comment(std::to_string(rows.size() - failed) + " of " + std::to_string(rows.size()) +
                " within tolerance");
  if (json) report.print();
  return failed == 0 ? 0 : 1;
}

std::vector<int> parse_mapping(const std::string& text, int ranks, int nodes) {
  std::vector<int> out(ranks);
  if (text == "block" || text.empty()) {
    const int per = (ranks + nodes - 1) / nodes;
    for (int r = 0; r < ranks; ++r) out[r] = r / per;
  } else if (text == "cyclic") {
    for (int r = 0; r < ranks; ++r) out[r] = r % nodes;
  } else {
    std::istringstream in(text);
    std::string part;
    int r = 0;
    while (std::getline(in, part, ',')) {
      if (r >= ranks)
        throw Error("--mapping lists more nodes than the trace's " + std::to_string(ranks) +
                    " ranks");
      out[r++] = std::stoi(part);
    }
    if (r != ranks)
      throw Error("--mapping lists " + std::to_string(r) + " nodes for " + std::to_string(ranks) +
                  " ranks");
  }
  for (int n : out)
    if (n < 0 || n >= nodes)
      throw Error("--mapping puts a rank on node " + std::to_string(n) + " of " +
                  std::to_string(nodes));
  return out;
}

int run_replay(const std::string& dir, const std::string& trace_dir, const std::string& fabric_name,
               int nodes, const std::string& mapping, bool register_mode, bool segments,
               bool json) {
  const std::vector<RankTrace> traces = read_trace_dir(trace_dir);
  TraceJob tj = job_from_traces(traces, segments);
  const int ranks = static_cast<int>(tj.job.ranks.size());
  auto fabric = Fabric::load(dir, fabric_name);
  if (nodes <= 0) nodes = ranks;
  fabric->build(nodes);
  tj.job.node_of_rank = parse_mapping(mapping, ranks, nodes);
  tj.job.register_mode = register_mode;
  const Result result = simulate(*fabric, tj.job);
  Table table(json);
  Report report("tca-sim");
  report.set("command", "replay");
  report.set("trace", trace_dir);
  report.set("fabric", fabric_name);
  report.set("ranks", ranks);
  report.set("nodes", nodes);
  report.set("register_mode", register_mode);
  report.set("segments", segments);
  report.set("kicks", tj.kicks);
  report.set("transfers", tj.transfers);
  report.set("waits", tj.waits);
  report.set("device_collectives", tj.device_collectives);
  report.set("device_unlabelled", tj.device_unlabelled);
  report.set("gpu_timed", tj.gpu_timed);
  report.set("gpu_overlaps", tj.gpu_overlaps);
  report.set("device_program_unset", fabric->device_program_unset());
  std::vector<std::string> work_unset;
  for (const std::string& program : tj.device_programs)
    if (!fabric->has_device_work(program)) work_unset.push_back("device_work_" + program);
  report.set("device_work_unset", work_unset);
  const std::string device = tj.device_collectives > 0
                                 ? ", " + std::to_string(tj.device_collectives) +
                                       " collectives run by the GPU (steps modelled)"
                                 : "";
  table.comment("replay of " + trace_dir + " (" + std::to_string(ranks) + " ranks, " +
                std::to_string(tj.kicks) + " kicks, " + std::to_string(tj.transfers) +
                " transfers, " + std::to_string(tj.waits) + " waits" + device + ") on " +
                fabric_name + ", " + std::to_string(nodes) + " nodes; simulated in " +
                fmt("%.2f", result.wall_seconds) + " s");
  if (tj.device_collectives > 0 && !fabric->device_program_unset().empty()) {
    std::string keys;
    for (const std::string& key : fabric->device_program_unset())
      keys += (keys.empty() ? "" : ", ") + key;
    table.comment("GPU programs: " + fabric_name + " leaves " + keys +
                  " unset (free: a step is its message alone)");
  }
  if (!work_unset.empty()) {
    std::string keys;
    for (const std::string& key : work_unset) keys += (keys.empty() ? "" : ", ") + key;
    table.comment("GPU programs: " + fabric_name + " leaves " + keys +
                  " unset (free: a program is its steps alone)");
  }
  if (tj.device_unlabelled > 0)
    table.comment(std::to_string(tj.device_unlabelled) +
                  " GPU iterations without protocol, channels and call (a trace from before "
                  "them): device_call each, no bound of their blocks");
  if (tj.gpu_timed > 0)
    table.comment(std::to_string(tj.gpu_timed) +
                  " stream-ordered GPU iterations timed on the GPU (call=stream)" +
                  (tj.gpu_overlaps > 0 ? ": " + std::to_string(tj.gpu_overlaps) +
                                             " host events inside their spans placed after them"
                                       : std::string()));
  table.comment(tj.common_clock ? "ranks on one host: aligned on the steady clock"
                                : "ranks on several hosts: each starts at its first event");
  table.set_columns({{"part", 40, Align::kLeft},
                     {"calls", 8},
                     {"measured", 14, Align::kRight, 3, "(ms)"},
                     {"model", 14, Align::kRight, 3, "(ms)"},
                     {"model/measured", 15, Align::kRight, 3}});
  table.header();
  auto add = [&](const std::string& part, long calls, double measured, double model) {
    table.row({part, calls, 1e3 * measured, 1e3 * model, measured > 0 ? model / measured : 0.0});
    report.add_row(nlohmann::ordered_json{{"impl", "model." + fabric_name},
                                          {"part", part},
                                          {"calls", calls},
                                          {"measured_s", measured},
                                          {"model_s", model},
                                          {"ratio", measured > 0 ? model / measured : 0.0}});
  };
  add("run", ranks, tj.measured, result.makespan);
  for (const auto& [name, total] : result.phases) {
    const auto m = tj.measured_phases.find(name);
    add(name, total.count, m == tj.measured_phases.end() ? 0.0 : m->second.max_seconds,
        total.max_seconds);
  }
  table.comment("phases: the slowest rank's total time in the phase");
  if (json) report.print();
  return 0;
}

const std::vector<std::string>& all_fabrics() {
  static const std::vector<std::string> names = {"peach2", "peach3", "apenet", "ib-qdr2", "ib-fdr"};
  return names;
}

int run_scale(const std::string& dir, std::vector<std::string> fabrics,
              std::vector<std::string> patterns, int min_nodes, int max_nodes, bool json) {
  if (fabrics.empty() || fabrics == std::vector<std::string>{"all"}) fabrics = all_fabrics();
  if (patterns.empty() || patterns == std::vector<std::string>{"all"})
    patterns = {"pingpong", "allreduce", "allgather", "bfs", "cg"};
  Table table(json);
  Report report("tca-sim");
  report.set("command", "scale");
  table.comment(
      "modelled patterns (allreduce 8 B CPU, allgather 128 KiB GPU, BFS scale 15 with 6 levels, "
      "CG class A N=14000, 1 iteration; pingpong GPU 8 B and 512 KiB)");
  table.set_columns({{"impl", 16, Align::kLeft},
                     {"pattern", 10, Align::kLeft},
                     {"algorithm", 19, Align::kLeft},
                     {"nodes", 6},
                     {"bytes", 9},
                     {"time_us", 12, Align::kRight, 2},
                     {"sim_s", 8, Align::kRight, 2}});
  table.header();
  double total_wall = 0;
  for (const std::string& name : fabrics) {
    auto fabric = Fabric::load(dir, name);
    const int top = std::min(max_nodes, fabric->max_nodes());
    fabric->build(top);
    const std::string impl = "model." + name;
    auto run = [&](const Job& job) {
      Result r = simulate(*fabric, job);
      total_wall += r.wall_seconds;
      return r;
    };
    auto emit = [&](const std::string& pattern, const std::string& algorithm, int nodes,
                    double bytes, double seconds, const Result& r) {
      table.row({impl, pattern, algorithm, static_cast<int64_t>(nodes), static_cast<int64_t>(bytes),
                 1e6 * seconds, r.wall_seconds});
      report.add_row(nlohmann::ordered_json{{"impl", impl},
                                            {"pattern", pattern},
                                            {"algorithm", algorithm},
                                            {"nodes", nodes},
                                            {"bytes", static_cast<int64_t>(bytes)},
                                            {"time_us", 1e6 * seconds},
                                            {"simulated_in_s", r.wall_seconds}});
    };
    for (const std::string& pattern : patterns) {
      if (pattern == "pingpong") {
        for (double bytes : {8.0, 512.0 * 1024}) {
          for (int far : {1, top - 1}) {
            if (far < 1) continue;
            Job job = pingpong(bytes, MemKind::kGpu, 4);
            job.node_of_rank = {0, far};
            const Result r = run(job);
            emit("pingpong", "to node " + std::to_string(far), 2, bytes, r.makespan / 8, r);
          }
        }
        continue;
      }
      for (int n = std::max(2, min_nodes); n <= top; n *= 2) {
        if (pattern == "allreduce" || pattern == "allgather") {
          for (Algorithm a : all_algorithms()) {
            const bool gather = pattern == "allgather";
            Job job = collective_job(gather, a, gather ? 128.0 * 1024 : 8.0,
                                     gather ? MemKind::kGpu : MemKind::kCpu, n, {});
            const Result r = run(job);
            emit(pattern, algorithm_name(a), n, gather ? 128.0 * 1024 : 8.0,
                 r.phases.at("coll").max_seconds, r);
          }
        } else if (pattern == "bfs") {
          const Result r = run(bfs_job(n, 15, 6));
          for (const auto& [phase, total] : r.phases)
            emit("bfs", phase, n, 0, total.max_seconds, r);
        } else if (pattern == "cg") {
          const Result r = run(cg_job(n, 14000, 1));
          for (const auto& [phase, total] : r.phases)
            emit("cg", phase, n, 8.0 * 14000 / n, total.max_seconds, r);
        } else {
          throw Error("pattern '" + pattern + "' is not pingpong, allreduce, allgather, bfs or cg");
        }
      }
    }
  }
  table.comment("simulation time, all rows: " + fmt("%.2f", total_wall) + " s");
  report.set("simulated_in_s", total_wall);
  if (json) report.print();
  return 0;
}

int run_route(const std::string& dir, const std::string& name, int nodes, int from, int to) {
  auto fabric = Fabric::load(dir, name);
  fabric->build(nodes);
  Request r;
  r.src = from;
  r.dst = to;
  r.bytes = 8;
  const Plan plan = fabric->plan(r);
  std::cout << "# " << name << " node " << from << " -> " << to << ": " << fabric->hops(from, to)
            << " hops, protocol " << plan.protocol << ", zero-load 8 B "
            << 1e6 * fabric->zero_load(r) << " us\n";
  for (int link : plan.links) std::cout << fabric->links()[link].name << "\n";
  return 0;
}

std::string node_list(const std::vector<int>& nodes) {
  std::string text;
  for (int n : nodes) text += (text.empty() ? "" : ",") + std::to_string(n);
  return text;
}

int run_placements(const std::string& dir, const std::string& name, int ranks,
                   const std::string& pattern, double bytes, bool json) {
  if (pattern != "allreduce" && pattern != "allgather")
    throw Error("pattern '" + pattern + "' is not allreduce or allgather");
  if (bytes < 0) throw Error("--bytes must not be negative");
  const bool allgather = pattern == "allgather";
  if (bytes == 0) bytes = allgather ? 128 * 1024 : 8;
  const MemKind kind = allgather ? MemKind::kGpu : MemKind::kCpu;  // the CG slides' two collectives
  auto fabric = Fabric::load(dir, name);
  fabric->build(std::max(1, fabric->subcluster()));
  const PlacementCensus census = placement_census(*fabric, allgather, bytes, kind, ranks);
  Table table(json);
  Report report("tca-sim");
  report.set("command", "placements");
  report.set("fabric", name);
  report.set("pattern", pattern);
  report.set("bytes", bytes);
  report.set("ranks", ranks);
  report.set("placements", census.placements);
  table.comment(pattern + " of " + fmt("%.0f", bytes) + " B (" + mem_kind_name(kind) +
                " memory), " + std::to_string(ranks) + " ranks on " + name + ": " +
                std::to_string(census.placements) +
                " placements (rank 0 on node 0); which algorithm is fastest on each");
  table.set_columns({{"algorithm", 20, Align::kLeft},
                     {"fastest", 9},
                     {"tied", 9},
                     {"best_us", 10, Align::kRight, 2},
                     {"best_placement", 0, Align::kLeft}});
  table.header();
  for (const auto& [algorithm, entry] : census.algorithms) {
    table.row({algorithm_name(algorithm), entry.fastest, entry.fastest_or_tied,
               1e6 * entry.best_seconds, node_list(entry.best_placement)});
    report.add_row(nlohmann::ordered_json{{"algorithm", algorithm_name(algorithm)},
                                          {"fastest", entry.fastest},
                                          {"fastest_or_tied", entry.fastest_or_tied},
                                          {"best_us", 1e6 * entry.best_seconds},
                                          {"best_placement", entry.best_placement}});
  }
  table.comment("fastest: strictly the fastest there; tied: fastest or within 0.1% of it");
  if (json) report.print();
  return 0;
}

}  // namespace
}  // namespace tca_sim

namespace {

// The source tree's descriptions where they are (a build tree), else the installed ones next to
// the program (<prefix>/bin/tca-sim, <prefix>/share/tca/fabrics).
std::string default_fabric_dir() {
  struct stat info {};
  if (stat(TCA_SIM_FABRIC_DIR, &info) == 0 && S_ISDIR(info.st_mode)) return TCA_SIM_FABRIC_DIR;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return TCA_SIM_FABRIC_DIR;
  std::string path(exe, static_cast<size_t>(n));
  path = path.substr(0, path.rfind('/'));
  return path.substr(0, path.rfind('/')) + "/share/tca/fabrics";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tca-sim: the seeds' fabrics (PEACH2, PEACH3, APEnet+, InfiniBand, PCIe/QPI, NVLink) as a "
      "calibrated SimGrid model; calibration, trace replay, scaling"};
  std::string fabric_dir = default_fabric_dir();
  app.add_option("--fabrics", fabric_dir, "Folder of the .fabric descriptions")
      ->capture_default_str();
  app.require_subcommand(1);
  bool json = false;
  auto* calibrate = app.add_subcommand("calibrate", "Seed figures against the model (+-10%)");
  calibrate->add_flag("--json", json, "One JSON object on stdout, the table on stderr");
  auto* replay = app.add_subcommand("replay", "Predict a traced run (TCA_TRACE=DIR) on a fabric");
  std::string trace_dir, fabric = "peach3", mapping = "block";
  int nodes = 0;
  replay->add_option("--trace", trace_dir, "Folder of rank-R.trace files")->required();
  replay->add_option("--fabric", fabric, "Fabric description name")->capture_default_str();
  replay->add_option("--nodes", nodes, "Nodes of the fabric (default: one per rank)");
  replay->add_option("--mapping", mapping, "Ranks to nodes: block, cyclic or a list n0,n1,...")
      ->capture_default_str();
  bool register_mode = false, segments = false;
  replay->add_flag(
      "--segments", segments,
      "A phase per run of kicks of one shape (path, kinds, bytes): the rows of a trace "
      "without phase marks (tca-pingpong)");
  replay->add_flag(
      "--register-mode", register_mode,
      "PEACH fabrics: descriptors held in the chip (register mode), no fetch per transfer");
  replay->add_flag("--json", json, "One JSON object on stdout, the table on stderr");
  auto* scale = app.add_subcommand("scale", "The seeds' patterns from 2 to 1,024 nodes");
  std::vector<std::string> fabrics{"all"}, patterns{"all"};
  int min_nodes = 2, max_nodes = 1024;
  scale->add_option("--fabric", fabrics, "Fabric names, or all")->capture_default_str();
  scale->add_option("--pattern", patterns, "pingpong, allreduce, allgather, bfs, cg, or all")
      ->capture_default_str();
  scale->add_option("--min-nodes", min_nodes, "Fewest nodes")->capture_default_str();
  scale->add_option("--max-nodes", max_nodes, "Most nodes")->capture_default_str();
  scale->add_flag("--json", json, "One JSON object on stdout, the table on stderr");
  auto* route = app.add_subcommand("route", "One route and its hops");
  int from = 0, to = 1;
  route->add_option("--fabric", fabric, "Fabric description name")->capture_default_str();
  route->add_option("--nodes", nodes, "Nodes to build")->required();
  route->add_option("--from", from, "Source node")->capture_default_str();
  route->add_option("--to", to, "Destination node")->capture_default_str();
  auto* placements =
      app.add_subcommand("placements", "Which algorithm is fastest on every placement of R ranks");
  int ranks = 4;
  std::string pattern = "allreduce";
  double bytes = 0;
  placements->add_option("--fabric", fabric, "A torus fabric (tca, apenet)")->capture_default_str();
  placements->add_option("--ranks", ranks, "Ranks, a power of two")->capture_default_str();
  placements->add_option("--pattern", pattern, "allreduce (CPU memory) or allgather (GPU memory)")
      ->capture_default_str();
  placements->add_option("--bytes", bytes,
                         "Bytes (default: 8 for allreduce, 128 KiB in all for allgather)");
  placements->add_flag("--json", json, "One JSON object on stdout, the table on stderr");
  CLI11_PARSE(app, argc, argv);
  try {
    if (*calibrate) return tca_sim::run_calibrate(fabric_dir, json);
    if (*replay)
      return tca_sim::run_replay(fabric_dir, trace_dir, fabric, nodes, mapping, register_mode,
                                 segments, json);
    if (*scale)
      return tca_sim::run_scale(fabric_dir, fabrics, patterns, min_nodes, max_nodes, json);
    if (*placements)
      return tca_sim::run_placements(fabric_dir, fabric, ranks, pattern, bytes, json);
    return tca_sim::run_route(fabric_dir, fabric, nodes, from, to);
  } catch (const std::exception& error) {
    std::cerr << "tca-sim: " << error.what() << "\n";
    return 1;
  }
}
