// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-bfs: Graph500 Benchmark 1 (breadth-first search) with its communication through tca.
// docs/BFS.md describes the options, the algorithms and the output.
#include <mpi.h>
#include <tca/tca.h>

#include <cstdio>

#include "common.h"
#include "options.h"
#include "output.h"
#include "run.h"
#include "tca_harness/check.h"

int main(int argc, char** argv) {
  // SERIALIZED: tca may make MPI calls from its guard thread (TCA_MPI_GUARD).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  tca_harness::set_program_name("tca-bfs");
  bfs::Options options;
  tca_harness::Cli cli(
      "tca-bfs: Graph500 Benchmark 1 (BFS) with tca communication "
      "(run: mpirun -n N tca-bfs --scale 20)");
  bfs::add_options(cli, options);
  if (auto code = cli.parse(argc, argv, rank, [&] { bfs::check_options(options); })) {
    MPI_Finalize();
    return *code;
  }
  tca_harness::check(tcaInit(), "tcaInit");
  int status = 0;
  try {
    const bfs::RunSummary summary = bfs::run_benchmark(MPI_COMM_WORLD, options);
    bfs::print_report(summary, options, rank == 0);
    status = summary.failures.empty() ? 0 : 2;
  } catch (const bfs::AgreedError& e) {
    if (rank == 0) std::fprintf(stderr, "tca-bfs: %s\n", e.what());
    status = 1;
  } catch (const std::exception& e) {
    tca_harness::die(e.what());  // this rank alone: the others may wait in a collective
  }
  tca_harness::check(tcaFinalize(), "tcaFinalize");
  MPI_Finalize();
  return status;
}
