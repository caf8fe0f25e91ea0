// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-bfs: Graph500 Benchmark 1 (breadth-first search) with its communication through tca.
// docs/BFS.md describes the options, the algorithms and the output.
#include <tca/tca.h>

#include <cstdio>

#include "common.h"
#include "control.h"
#include "options.h"
#include "output.h"
#include "run.h"
#include "tca_harness/check.h"

int main(int argc, char** argv) {
  tca_harness::set_program_name("tca-bfs");
  // MPI where an MPI launcher started the job (tca then starts below), else tca (started here).
  const std::string failure = tca_apps::start_control(&argc, &argv);
  if (!failure.empty()) tca_harness::die(failure);
  const int rank = tca_apps::rank();
  bfs::Options options;
  tca_harness::Cli cli(
      "tca-bfs: Graph500 Benchmark 1 (BFS) with tca communication "
      "(run: tca-run -n N tca-bfs --scale 20, or mpirun -n N ...)");
  bfs::add_options(cli, options);
  if (auto code = cli.parse(argc, argv, rank, [&] { bfs::check_options(options); })) {
    tca_apps::finish_control();
    return *code;
  }
  const bool start_tca = !tca_apps::tca_started_by_control();
  if (start_tca) tca_harness::check(tcaInit(), "tcaInit");
  int status = 0;
  try {
    const bfs::RunSummary summary = bfs::run_benchmark(options);
    bfs::print_report(summary, options, rank == 0);
    status = summary.failures.empty() ? 0 : 2;
  } catch (const bfs::AgreedError& e) {
    if (rank == 0) std::fprintf(stderr, "tca-bfs: %s\n", e.what());
    status = 1;
  } catch (const std::exception& e) {
    tca_harness::die(e.what());  // this rank alone: the others may wait in a collective
  }
  if (start_tca) tca_harness::check(tcaFinalize(), "tcaFinalize");
  tca_apps::finish_control();
  return status;
}
