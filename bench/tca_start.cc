// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-start: what starting and ending a job costs. Every rank times its tcaInit and tcaFinalize,
// repeatedly (init again after finalize); the table gives, per repetition kind, the slowest
// rank's time: the first start (processes still arriving) and the median and minimum of the
// starts after it. The bootstrap is whatever started the job (TCA_BOOTSTRAP): run it under
// tca-run, torchrun and mpirun to compare them.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "tca_harness/check.h"
#include "tca_harness/launch.h"
#include "tca_harness/options.h"
#include "tca_harness/report.h"
#include "tca_harness/stats.h"
#include "tca_harness/table.h"
#include "tca_harness/timer.h"

namespace {

struct Job {
  std::string bootstrap;
  int size = 0;
  int rank = 0;
  std::vector<double> init_s;      // slowest rank's tcaInit, per start
  std::vector<double> finalize_s;  // slowest rank's tcaFinalize, per end
};

// The slowest rank's value (collective over the bootstrap).
double slowest(double mine, int size) {
  std::vector<double> all(static_cast<size_t>(size));
  tca_harness::check(tcaBootstrapAllgather(&mine, all.data(), sizeof mine),
                     "tcaBootstrapAllgather");
  return *std::max_element(all.begin(), all.end());
}

// `starts` starts and ends; the last end's time is gathered by one more (untimed) start.
void run(int starts, Job* job) {
  double last_finalize = -1;
  for (int start = 0; start <= starts; ++start) {
    tca_harness::Timer timer;
    tca_harness::check(tcaInit(), "tcaInit");
    const double init = timer.seconds();
    tca_harness::check(tcaRank(&job->rank), "tcaRank");
    tca_harness::check(tcaSize(&job->size), "tcaSize");
    const char* name = nullptr;
    tca_harness::check(tcaBootstrapInfo(&name, nullptr), "tcaBootstrapInfo");
    job->bootstrap = name;
    if (start < starts) job->init_s.push_back(slowest(init, job->size));
    if (last_finalize >= 0) job->finalize_s.push_back(slowest(last_finalize, job->size));
    timer.restart();
    tca_harness::check(tcaFinalize(), "tcaFinalize");
    last_finalize = timer.seconds();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string no_mpi = tca_harness::start_reference_mpi(&argc, &argv);
  tca_harness::set_program_name("tca-start");
  const int launch_rank = tca_harness::launch_rank();
  int starts = 10;
  bool json = false;
  tca_harness::Cli cli(
      "tca-start: the time of tcaInit and tcaFinalize, started again and again, for the "
      "bootstrap that started the job (run: tca-run -n 4 tca-start, torchrun --no-python "
      "--nproc-per-node 4 tca-start, mpirun -n 4 tca-start)");
  cli.app()
      .add_option("-r,--starts", starts, "timed starts")
      ->check(CLI::Range(2, 10000))
      ->capture_default_str();
  cli.add_json(json);
  if (auto code = cli.parse(argc, argv, launch_rank)) {
    tca_harness::finish_reference_mpi();
    return *code;
  }
  Job job;
  run(starts, &job);
  const bool printing = job.rank == 0;
  tca_harness::Table table(json, printing);
  tca_harness::Report report("tca-start", json && printing);
  report.set("bootstrap", job.bootstrap);
  report.set("ranks", job.size);
  report.set("starts", starts);
  table.comment("tca-start: the slowest rank's tcaInit / tcaFinalize over " +
                std::to_string(starts) + " starts of a job of " + std::to_string(job.size) +
                " rank(s), bootstrap " + job.bootstrap);
  table.set_columns({{"bootstrap", 9, tca_harness::Align::kLeft},
                     {"ranks", 6},
                     {"call", 11, tca_harness::Align::kLeft},
                     {"first", 9, tca_harness::Align::kRight, 2, "(ms)"},
                     {"median", 9, tca_harness::Align::kRight, 2, "(ms)"},
                     {"min", 9, tca_harness::Align::kRight, 2, "(ms)"},
                     {"max", 9, tca_harness::Align::kRight, 2, "(ms)"}});
  table.header();
  table.units();
  for (const auto& [call, values] :
       {std::pair<const char*, const std::vector<double>*>{"tcaInit", &job.init_s},
        {"tcaFinalize", &job.finalize_s}}) {
    const std::vector<double> later(values->begin() + 1, values->end());
    const double first = 1e3 * values->front();
    const double median = 1e3 * tca_harness::median(later);
    const double min = 1e3 * tca_harness::minimum(later);
    const double max = 1e3 * *std::max_element(later.begin(), later.end());
    table.row({job.bootstrap, job.size, call, first, median, min, max});
    report.add_row({{"bootstrap", job.bootstrap},
                    {"ranks", job.size},
                    {"call", call},
                    {"first_ms", first},
                    {"median_ms", median},
                    {"min_ms", min},
                    {"max_ms", max}});
  }
  if (printing && json) report.print();
  tca_harness::finish_reference_mpi();
  return 0;
}
