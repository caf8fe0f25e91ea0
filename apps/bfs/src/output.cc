// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "output.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "tca_harness/report.h"
#include "tca_harness/stats.h"
#include "tca_harness/table.h"

namespace bfs {
namespace {

using nlohmann::ordered_json;
using tca_harness::format;
using tca_harness::Summary;

struct Field {
  std::string key;
  double value;
};

// The statistics the specification asks for, named as the reference implementation names them.
std::vector<Field> graph500_fields(const CommRun& run) {
  std::vector<double> time, nedge, teps;
  for (const SearchRecord& r : run.searches) {
    time.push_back(r.result.seconds);
    nedge.push_back(static_cast<double>(r.nedge));
    teps.push_back(r.teps);
  }
  std::vector<Field> fields;
  const auto add = [&](const std::string& what, const Summary& s, bool harmonic) {
    fields.push_back({"min_" + what, s.min});
    fields.push_back({"firstquartile_" + what, s.first_quartile});
    fields.push_back({"median_" + what, s.median});
    fields.push_back({"thirdquartile_" + what, s.third_quartile});
    fields.push_back({"max_" + what, s.max});
    fields.push_back({"mean_" + what, s.mean});
    fields.push_back({"stddev_" + what, s.stddev});
    if (harmonic) {  // rates: the specification compares their harmonic mean
      fields.push_back({"harmonic_mean_" + what, s.harmonic_mean});
      fields.push_back({"harmonic_stddev_" + what, s.harmonic_stddev});
    }
  };
  add("time", tca_harness::summarize(time), false);
  add("nedge", tca_harness::summarize(nedge), false);
  add("TEPS", tca_harness::summarize(teps), true);
  return fields;
}

// Totals over the run's searches: compute, flag, out, tree.
PhaseSeconds phase_totals(const CommRun& run) {
  PhaseSeconds total{};
  for (const SearchRecord& r : run.searches)
    for (int p = 0; p < kPhases; ++p) total[p] += r.result.phases[p];
  return total;
}

// With --levels: the compute of the slowest rank of each level, summed over levels and searches.
double slowest_compute(const CommRun& run) {
  double total = 0;
  for (const SearchRecord& r : run.searches)
    for (const LevelRecord& level : r.result.per_level) total += level.compute_max;
  return total;
}

int validated_count(const CommRun& run) {
  int count = 0;
  for (const SearchRecord& r : run.searches) count += r.validated ? 1 : 0;
  return count;
}

const char* direction_name(Direction d) {
  return d == Direction::kTopDown ? "top-down" : "bottom-up";
}

ordered_json level_json(const LevelRecord& level, int index) {
  return ordered_json{{"level", index},
                      {"direction", direction_name(level.direction)},
                      {"frontier", level.frontier},
                      {"frontier_arcs", level.frontier_arcs},
                      {"compute_s", level.seconds[0]},
                      {"flag_s", level.seconds[1]},
                      {"out_s", level.seconds[2]},
                      {"compute_min_s", level.compute_min},
                      {"compute_max_s", level.compute_max},
                      {"slowest_rank", level.slowest_rank}};
}

ordered_json search_json(const SearchRecord& r, bool validate, bool levels) {
  const PhaseSeconds& p = r.result.phases;
  ordered_json search{{"root", r.result.root},
                      {"nedge", r.nedge},
                      {"time_s", r.result.seconds},
                      {"TEPS", r.teps},
                      {"levels", r.result.levels},
                      {"reached", r.result.reached},
                      {"validated", validate ? ordered_json(r.validated) : ordered_json(nullptr)},
                      {"compute_s", p[0]},
                      {"flag_s", p[1]},
                      {"out_s", p[2]},
                      {"tree_s", p[3]},
                      {"validate_s", r.validate_seconds}};
  if (levels) {
    ordered_json list = ordered_json::array();
    for (size_t l = 0; l < r.result.per_level.size(); ++l)
      list.push_back(level_json(r.result.per_level[l], static_cast<int>(l)));
    search["per_level"] = list;
  }
  return search;
}

ordered_json run_json(const CommRun& run, const Options& o) {
  ordered_json row{{"comm", run.comm}, {"NBFS", run.searches.size()}};
  for (const Field& f : graph500_fields(run)) row[f.key] = f.value;
  const PhaseSeconds total = phase_totals(run);
  row["compute_time"] = total[0];
  row["comm_flag_time"] = total[1];
  row["comm_out_time"] = total[2];
  row["comm_tree_time"] = total[3];
  if (o.levels) row["compute_slowest_rank_time"] = slowest_compute(run);
  row["validated"] = validated_count(run);
  ordered_json searches = ordered_json::array();
  for (const SearchRecord& r : run.searches)
    searches.push_back(search_json(r, o.validate, o.levels));
  row["searches"] = searches;
  return row;
}

void print_levels(FILE* out, const CommRun& run) {
  for (const SearchRecord& r : run.searches) {
    std::fprintf(out, "# levels of the search from %u (--comm %s)\n", r.result.root,
                 run.comm.c_str());
    std::fprintf(
        out,
        "#  level  direction       frontier    frontier_arcs  compute(us)  flag(us)   out(us)"
        "  ranks' compute min/max(us)  slowest\n");
    for (size_t l = 0; l < r.result.per_level.size(); ++l) {
      const LevelRecord& level = r.result.per_level[l];
      std::fprintf(out, "   %5zu  %-9s  %13lld  %15lld  %11.1f  %8.1f  %8.1f  %13.1f %12.1f  %7d\n",
                   l, direction_name(level.direction), static_cast<long long>(level.frontier),
                   static_cast<long long>(level.frontier_arcs), level.seconds[0] * 1e6,
                   level.seconds[1] * 1e6, level.seconds[2] * 1e6, level.compute_min * 1e6,
                   level.compute_max * 1e6, level.slowest_rank);
    }
  }
}

void print_comparison(const RunSummary& s, bool json) {
  tca_harness::Table table(json, true);
  table.comment(
      "the comms of this run on the same graph and search keys; times are means per search");
  table.set_columns({{"comm", 6, tca_harness::Align::kLeft},
                     {"searches", 8},
                     {"valid", 5},
                     {"hmean TEPS", 12, tca_harness::Align::kRight, 4, "(GTEPS)"},
                     {"median time", 12, tca_harness::Align::kRight, 3, "(ms)"},
                     {"compute", 10, tca_harness::Align::kRight, 3, "(ms)"},
                     {"COMM.FLAG", 10, tca_harness::Align::kRight, 3, "(ms)"},
                     {"COMM.OUT", 10, tca_harness::Align::kRight, 3, "(ms)"},
                     {"COMM.TREE", 10, tca_harness::Align::kRight, 3, "(ms)"}});
  table.header();
  table.units();
  for (const CommRun& run : s.runs) {
    if (!run.skipped.empty() || run.searches.empty()) continue;
    std::vector<double> time, teps;
    for (const SearchRecord& r : run.searches) {
      time.push_back(r.result.seconds);
      teps.push_back(r.teps);
    }
    const PhaseSeconds total = phase_totals(run);
    const double n = static_cast<double>(run.searches.size());
    table.row({run.comm, static_cast<int64_t>(run.searches.size()),
               static_cast<int64_t>(validated_count(run)),
               tca_harness::summarize(teps).harmonic_mean * 1e-9, tca_harness::median(time) * 1e3,
               total[0] / n * 1e3, total[1] / n * 1e3, total[2] / n * 1e3, total[3] / n * 1e3});
  }
}

void print_text(const RunSummary& s, const Options& o) {
  FILE* out = o.json ? stderr : stdout;
  std::fprintf(out, "# tca-bfs: Graph500 Benchmark 1 (BFS), %d ranks, %s\n", s.ranks,
               s.device.c_str());
  std::fprintf(
      out, "# graph: %llu vertices, %llu input tuples (%s), %llu arcs kept; search keys %s\n",
      static_cast<unsigned long long>(s.vertices), static_cast<unsigned long long>(s.tuples),
      s.generated ? ("Kronecker, seed " + std::to_string(s.seed)).c_str() : o.edges_file.c_str(),
      static_cast<unsigned long long>(s.arcs), s.keys.c_str());
  std::fprintf(out, "SCALE: %d\nedgefactor: %lld\n", s.scale, static_cast<long long>(s.edgefactor));
  std::fprintf(out, "graph_generation: %g\nnum_mpi_processes: %d\nconstruction_time: %g\n",
               s.generation_time, s.ranks, s.construction_time);
  for (const CommRun& run : s.runs) {
    if (!run.skipped.empty()) {
      std::fprintf(out, "# --comm %s: skipped, %s\n", run.comm.c_str(), run.skipped.c_str());
      continue;
    }
    std::fprintf(out, "comm: %s\nNBFS: %zu\n", run.comm.c_str(), run.searches.size());
    for (const Field& f : graph500_fields(run))
      std::fprintf(out, "%s: %g\n", f.key.c_str(), f.value);
    const PhaseSeconds total = phase_totals(run);
    std::fprintf(out,
                 "compute_time: %g\ncomm_flag_time: %g\ncomm_out_time: %g\ncomm_tree_time: %g\n",
                 total[0], total[1], total[2], total[3]);
    if (o.validate) std::fprintf(out, "validated: %d\n", validated_count(run));
    if (o.levels) {
      std::fprintf(out, "compute_slowest_rank_time: %g\n", slowest_compute(run));
      print_levels(out, run);
    }
  }
  print_comparison(s, o.json);
  for (const std::string& failure : s.failures) std::fprintf(out, "# WRONG: %s\n", failure.c_str());
  std::fflush(out);
}

void print_json(const RunSummary& s, const Options& o) {
  tca_harness::Report report("tca-bfs");
  report.set("SCALE", s.scale);
  report.set("edgefactor", s.edgefactor);
  report.set("graph_generation", s.generation_time);
  report.set("num_mpi_processes", s.ranks);
  report.set("construction_time", s.construction_time);
  report.set("vertices", s.vertices);
  report.set("tuples", s.tuples);
  report.set("arcs", s.arcs);
  report.set("input", s.generated ? "kronecker" : o.edges_file);
  report.set("seed", s.seed);
  report.set("device", s.device);
  report.set("search_keys", s.keys);
  report.set("validate", s.validate);
  for (const CommRun& run : s.runs) {
    if (!run.skipped.empty())
      report.add_note("--comm " + run.comm + ": skipped, " + run.skipped);
    else
      report.add_row(run_json(run, o));
  }
  for (const std::string& failure : s.failures) report.add_note("WRONG: " + failure);
  report.print();
}

}  // namespace

void print_report(const RunSummary& summary, const Options& options, bool active) {
  if (!active) return;
  print_text(summary, options);
  if (options.json) print_json(summary, options);
}

}  // namespace bfs
