// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-handles: what a handle's life costs, per transport that carries the control traffic.
// Rank 1 registers regions (tcaCreateHandle), rank 0 uses each for the first time (the import:
// the owner's record read through the transport and checked against the handle, digest and
// all), then again (the imported region found), and rank 1 withdraws them (tcaDestroyHandle).
// Each is timed over a batch of handles; the table gives the median and minimum per handle.
// Control (handing the handles over, agreeing, gathering the owner's times) runs through tca's
// bootstrap, so the program needs no MPI.
#include <cstdio>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "tca_harness/check.h"
#include "tca_harness/launch.h"
#include "tca_harness/options.h"
#include "tca_harness/ranks.h"
#include "tca_harness/report.h"
#include "tca_harness/stats.h"
#include "tca_harness/table.h"
#include "tca_harness/timer.h"

namespace {

using tca_harness::Table;

struct Options {
  int handles = 256;
  int repetitions = 7;
  size_t bytes = 4096;
  std::vector<std::string> transports;
  bool json = false;
};

// Per operation, the seconds per handle of each repetition.
struct Times {
  std::vector<double> create, first_use, steady, destroy;
};

bool ok(tcaResult result, const char* what) {
  if (result == TCA_SUCCESS) return true;
  std::fprintf(stderr, "tca-handles: %s failed: %s\n", what, tcaGetLastErrorMessage());
  return false;
}

// One repetition: rank 1 registers `handles` regions of one block, shares them, rank 0 uses
// each twice, rank 1 withdraws them. False (on the failing rank) when a call fails.
bool measure_once(const Options& options, int rank, unsigned char* block, Times* times) {
  const auto count = static_cast<size_t>(options.handles);
  std::vector<tcaHandle> handles(count);
  tca_harness::Timer timer;
  bool fine = true;
  if (rank == 1) {
    for (size_t i = 0; i < count && fine; ++i)
      fine = ok(tcaCreateHandle(&handles[i], block + i * options.bytes, options.bytes, TCA_MEM_CPU),
                "tcaCreateHandle");
    times->create.push_back(timer.seconds() / options.handles);
  }
  if (!ok(tcaBootstrapBroadcast(handles.data(), count * sizeof(tcaHandle), 1),
          "tcaBootstrapBroadcast"))
    return false;
  if (rank == 0) {
    for (int pass = 0; pass < 2 && fine; ++pass) {
      timer.restart();
      for (size_t i = 0; i < count && fine; ++i) {
        int owner = -1;
        size_t size = 0;
        tcaMemKind kind = TCA_MEM_CPU;
        fine = ok(tcaHandleInfo(&handles[i], &owner, &size, &kind), "tcaHandleInfo") &&
               owner == 1 && size == options.bytes;
      }
      (pass == 0 ? times->first_use : times->steady).push_back(timer.seconds() / options.handles);
    }
  }
  if (!ok(tcaBarrier(), "tcaBarrier")) return false;
  if (rank == 1) {
    timer.restart();
    for (size_t i = 0; i < count && fine; ++i)
      fine = ok(tcaDestroyHandle(&handles[i]), "tcaDestroyHandle");
    times->destroy.push_back(timer.seconds() / options.handles);
  }
  return fine;
}

enum class Start { kStarted, kSkipped, kFailed };

// tcaInit with `transport` preferred, on at least 2 ranks; `control` is the transport that then
// carries the traffic to the peer. A transport of the default list (`optional`) that this build
// lacks, or that does not carry that traffic here (mpi under another bootstrap), is skipped with
// a note.
Start start(const std::string& transport, bool optional, const Table& table,
            tca_harness::Report& report, int* rank, const char** control) {
  tcaConfig config{};
  config.transport = transport.c_str();
  const tcaResult started = tcaInitWithConfig(&config);
  if (optional && started == TCA_ERROR_INVALID_ARGUMENT) {
    tca_harness::skip_note(table, report, transport + ": not a transport of this build");
    return Start::kSkipped;
  }
  if (!ok(started, "tcaInitWithConfig")) return Start::kFailed;
  int size = 0;
  if (!ok(tcaRank(rank), "tcaRank") || !ok(tcaSize(&size), "tcaSize")) return Start::kFailed;
  if (size < 2) {
    std::fprintf(stderr,
                 "tca-handles: needs at least 2 ranks, got %d (run: tca-run -n 2 tca-handles, or "
                 "mpirun -n 2 tca-handles)\n",
                 size);
    tcaFinalize();
    return Start::kFailed;
  }
  if (!ok(tcaPeerTransport(*rank == 0 ? 1 : 0, control), "tcaPeerTransport")) return Start::kFailed;
  if (!optional || tca_harness::all_ranks(transport == *control)) return Start::kStarted;
  tca_harness::skip_note(table, report,
                         transport +
                             ": skipped, it does not carry the traffic between these "
                             "ranks (" +
                             *control + " does)");
  return ok(tcaFinalize(), "tcaFinalize") ? Start::kSkipped : Start::kFailed;
}

// Every repetition with `transport` preferred; the rows go to the table and the report.
bool measure(const Options& options, const std::string& transport, bool optional,
             const Table& table, tca_harness::Report& report) {
  int rank = 0;
  const char* control = "?";
  const Start started = start(transport, optional, table, report, &rank, &control);
  if (started != Start::kStarted) return started == Start::kSkipped;
  void* block = nullptr;
  bool fine = ok(tcaMalloc(&block, options.bytes * options.handles, TCA_MEM_CPU), "tcaMalloc");
  Times times;
  for (int r = 0; r < options.repetitions + 1 && fine; ++r) {
    Times& into = times;
    fine = measure_once(options, rank, static_cast<unsigned char*>(block), &into);
    if (r == 0) into = Times{};  // the first round warms caches and connections
  }
  const bool all_fine = tca_harness::all_ranks(fine);
  // The owner's figures travel to rank 0, which prints.
  std::vector<double> owner_side(2 * options.repetitions, 0.0);
  if (rank == 1 && all_fine) {
    std::copy(times.create.begin(), times.create.end(), owner_side.begin());
    std::copy(times.destroy.begin(), times.destroy.end(), owner_side.begin() + options.repetitions);
  }
  tca_harness::check(
      tcaBootstrapBroadcast(owner_side.data(), owner_side.size() * sizeof(double), 1),
      "tcaBootstrapBroadcast");
  if (block != nullptr) fine = ok(tcaFree(block), "tcaFree") && fine;
  fine = ok(tcaFinalize(), "tcaFinalize") && fine;
  if (!all_fine) return false;
  const std::vector<double> create(owner_side.begin(), owner_side.begin() + options.repetitions);
  const std::vector<double> destroy(owner_side.begin() + options.repetitions, owner_side.end());
  const std::pair<const char*, const std::vector<double>*> rows[] = {
      {"create", &create},
      {"first_use", &times.first_use},
      {"steady", &times.steady},
      {"destroy", &destroy}};
  for (const auto& [operation, values] : rows) {
    if (rank != 0) break;
    const double median_us = 1e6 * tca_harness::median(*values);
    const double min_us = 1e6 * tca_harness::minimum(*values);
    table.row({transport, control, operation, static_cast<uint64_t>(options.bytes), options.handles,
               median_us, min_us});
    report.add_row({{"transport", transport},
                    {"control", control},
                    {"operation", operation},
                    {"bytes", options.bytes},
                    {"handles", options.handles},
                    {"latency_us", median_us},
                    {"min_us", min_us}});
  }
  return fine;
}

}  // namespace

int main(int argc, char** argv) {
  // tca starts once per transport; under an MPI launcher, MPI must outlive each tcaFinalize
  // (it cannot initialize twice), so the program holds it. Elsewhere MPI stays out.
  tca_harness::start_reference_mpi(&argc, &argv);
  tca_harness::set_program_name("tca-handles");
  const int rank = tca_harness::launch_rank();
  Options options;
  tca_harness::Cli cli(
      "tca-handles: the cost of registering a region, of a peer's first and later use of its "
      "handle, and of withdrawing it, per transport (run: tca-run -n 2 tca-handles, or mpirun -n "
      "2 tca-handles)");
  cli.app()
      .add_option("-n,--handles", options.handles, "handles timed per batch")
      ->check(CLI::Range(1, 2048))
      ->capture_default_str();
  cli.app()
      .add_option("-r,--repetitions", options.repetitions, "timed batches")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cli.add_size("-s,--bytes", options.bytes, "bytes of each region", 1, size_t{1} << 20);
  cli.add_repeatable("-t,--transport", options.transports,
                     "the transport preferred for the run (repeatable; default: shm, mpi and "
                     "ucx where built)");
  cli.add_json(options.json);
  if (auto code = cli.parse(argc, argv, rank)) {
    tca_harness::finish_reference_mpi();
    return *code;
  }
  const bool defaults = options.transports.empty();
  if (defaults) options.transports = {"shm", "mpi", "ucx"};
  Table table(options.json, rank == 0);
  tca_harness::Report report("tca-handles", options.json && rank == 0);
  report.set("handles", options.handles);
  report.set("repetitions", options.repetitions);
  table.comment(
      "tca-handles: rank 1 registers regions, rank 0 uses each twice, rank 1 "
      "withdraws them; per handle, median and minimum of " +
      std::to_string(options.repetitions) + " batches of " + std::to_string(options.handles));
  table.set_columns({{"transport", 9, tca_harness::Align::kLeft},
                     {"control", 7, tca_harness::Align::kLeft},
                     {"operation", 9, tca_harness::Align::kLeft},
                     {"bytes", 8},
                     {"handles", 7},
                     {"median", 9, tca_harness::Align::kRight, 3, "(us)"},
                     {"min", 9, tca_harness::Align::kRight, 3, "(us)"}});
  table.header();
  table.units();
  int status = 0;
  for (const std::string& transport : options.transports) {
    if (!measure(options, transport, defaults, table, report)) {
      status = 1;
      break;
    }
  }
  report.print();
  tca_harness::finish_reference_mpi();
  return status;
}
