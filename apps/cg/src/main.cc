// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-cg: the conjugate gradient method over tca. NPB CG (classes S to D, verified against the
// official zeta) or CG on a Matrix Market matrix; CPU threads or a GPU per rank; rows (1d) or
// sqrt(P) x sqrt(P) blocks (2d); tca, MPI or NCCL communication, several in one run for a
// comparison on the same matrix. See docs/CG.md.
#include <tca/tca.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "comm.h"
#include "config.h"
#include "control.h"
#include "engine.h"
#include "problem.h"
#include "report.h"
#include "solver.h"
#include "spmv_alone.h"
#include "tca_harness/check.h"
#include "tca_harness/progress.h"
#include "tca_harness/report.h"
#include "tca_harness/table.h"

namespace tca_cg {
namespace {

bool uses(const Config& config, CommKind kind) {
  for (CommKind comm : config.comms) {
    if (comm == kind) return true;
  }
  return false;
}

std::unique_ptr<Engine> make_engine(const Config& config, const Layout& layout, Comm& comm,
                                    SpmvKind spmv) {
  const Allocator allocator = comm.allocator(config.device);
  const int scratch = comm.scratch_pieces(layout);
  if (config.device == Device::kGpu)
    return make_gpu_engine(layout, allocator, scratch, spmv, config.gpu);
  return make_cpu_engine(layout, allocator, scratch, config.threads, spmv);
}

struct Outcome {
  bool failed = false;  // verification failed or the error exceeded --max-error
};

// One configuration: comm and engine made, the matrix loaded, the run, its output.
void run_configuration(const Config& config, const Problem& problem, const RunLabel& base, int rank,
                       int ranks, const tca_harness::Table& table, tca_harness::Report& report,
                       Outcome& outcome) {
  std::string why_not;
  CommOptions comm_options = config.comm;
  comm_options.tca_exchange = base.tca_exchange;
  std::unique_ptr<Comm> comm =
      make_comm(base.comm, problem.layout, config.device, comm_options, &why_not);
  if (!comm) {
    tca_harness::skip_note(table, report,
                           std::string("comm ") + comm_name(base.comm) + ": skipped, " + why_not);
    return;
  }
  std::unique_ptr<Engine> engine = make_engine(config, problem.layout, *comm, base.spmv);
  engine->set_variant(base.variant);
  engine->set_matrix(problem.matrix);
  comm->bind(*engine);
  RunLabel label = base;
  label.tca_exchange = comm->tca_exchange();  // what runs (the one asked for may not be possible)
  label.engine = engine->describe();
  label.spmv_kernel = engine->spmv_kernel();
  label.spmv_choice = engine->spmv_choice();
  const std::string exchanges = comm->describe();
  if (!exchanges.empty()) label.engine += "; " + exchanges;

  RunOptions options;
  options.graph = config.graph;
  options.breakdown = config.breakdown;
  options.kernel_times = config.kernel_times;
  if (config.npb) {
    if (base.comm == CommKind::kMpi && config.reference_iterations > 0)
      options.iterations = std::min(config.reference_iterations, config.npb->niter);
    const int iterations = options.iterations > 0 ? options.iterations : config.npb->niter;
    tca_harness::Progress progress(std::string("tca-cg ") + comm_name(label.comm), iterations,
                                   rank == 0);
    options.progress = [&progress](int done, int) { progress.update(done); };
    const NpbResult result = run_npb(*config.npb, *engine, *comm, problem.layout, options);
    progress.finish();
    const BreakdownSummary summary = summarize_breakdown(
        result.breakdown, static_cast<long>(result.iterations_run) * kNpbCgSteps,
        engine->spmv_bytes());
    print_npb(table, config, problem, result, label, ranks);
    print_breakdown(table, summary, label);
    nlohmann::ordered_json row = npb_row(config, problem, result, label, summary, ranks);
    if (!result.kernel_times.empty()) {
      const KernelTimesSummary kernels =
          summarize_kernel_times(result.kernel_times, static_cast<long>(kNpbCgSteps));
      print_kernel_times(table, kernels, comm_name(label.comm));
      row["kernel_times"] = kernel_times_json(kernels);
    } else if (config.kernel_times) {
      table.comment(std::string("kernel times (") + comm_name(label.comm) +
                    "): not measured: this configuration launches its steps from the host, "
                    "not as CUDA graph replays");
    }
    report.add_row(std::move(row));
    // A run of fewer iterations than the class's (--reference-iterations) cannot be verified.
    if (npb_complete(*config.npb, result) && !npb_verified(*config.npb, result.zeta))
      outcome.failed = true;
  } else {
    SolveOptions solve;
    solve.max_iterations = config.iterations;
    solve.tolerance = config.tolerance;
    solve.rhs = problem.rhs;
    tca_harness::Progress progress(std::string("tca-cg ") + comm_name(label.comm),
                                   config.iterations, rank == 0);
    options.progress = [&progress](int done, int) { progress.update(done); };
    const SolveResult result = run_solve(*engine, *comm, problem.layout, solve, options);
    progress.finish();
    const BreakdownSummary summary =
        summarize_breakdown(result.breakdown, result.iterations, engine->spmv_bytes());
    print_solve(table, config, problem, result, label);
    print_breakdown(table, summary, label);
    report.add_row(solve_row(problem, result, label, summary));
    if (config.max_error && !(solve_error(problem, result) <= *config.max_error)) {
      table.line(tca_harness::format(" ERROR: ||x - 1|| / sqrt(n) = %.3e exceeds --max-error %.3e",
                                     solve_error(problem, result), *config.max_error));
      outcome.failed = true;
    }
    if (config.tolerance && !result.converged) outcome.failed = true;
  }
  engine->synchronize();
  comm.reset();  // collective frees while the engine's buffers still exist
}

// Every configuration in turn: repetitions, comms, SpMV kernels, recurrences, and for tca on
// several ranks each exchange.
void run_configurations(const Config& config, const Problem& problem, int rank, int ranks,
                        const tca_harness::Table& table, tca_harness::Report& report,
                        Outcome& outcome) {
  for (int repetition = 1; repetition <= config.repetitions; ++repetition) {
    for (CommKind comm : config.comms) {
      for (SpmvKind spmv : config.spmvs) {
        for (CgVariant variant : config.variants) {
          // tca on several ranks: once per exchange; otherwise the exchange means nothing.
          const bool each = comm == CommKind::kTca && ranks > 1;
          for (TcaExchange exchange : config.tca_exchanges) {
            RunLabel label{comm, spmv, repetition, "", "", ""};
            label.tca_exchange = exchange;
            label.has_tca_exchange = each;
            label.variant = variant;
            run_configuration(config, problem, label, rank, ranks, table, report, outcome);
            if (!each) break;
          }
        }
      }
    }
  }
}

int run(int argc, char** argv) {
  const int rank = tca_apps::rank(), ranks = tca_apps::size();
  const int local_rank = tca_apps::local_rank();
  const int on_host = tca_apps::ranks_on_host();

  Config config;
  if (std::optional<int> code = parse_config(argc, argv, rank, ranks, on_host, &config))
    return *code;

  std::string error;
  if (config.device == Device::kGpu) {
    try {
      select_gpu(local_rank);
    } catch (const std::exception& failure) {
      error = std::string("--device gpu: rank ") + std::to_string(rank) + ": " + failure.what();
    }
    error = first_error(error);
  }
  if (!error.empty()) {
    if (rank == 0) std::fprintf(stderr, "tca-cg: error: %s\n", error.c_str());
    return 1;
  }

  // Under MPI, tca starts only where a run uses it; the tca backend started it already.
  const bool tca = uses(config, CommKind::kTca) && ranks > 1 && !tca_apps::tca_started_by_control();
  if (tca) tca_harness::check(tcaInit(), "tcaInit");

  int status = 0;
  {
    Problem problem;
    // --spmv-alone: one process holds the block of rank spmv_block of spmv_alone ranks.
    const bool alone = config.spmv_alone > 0;
    error = alone ? build_problem(config, config.spmv_block, config.spmv_alone, &problem)
                  : build_problem(config, rank, ranks, &problem);
    if (!error.empty()) {
      if (rank == 0) std::fprintf(stderr, "tca-cg: error: %s\n", error.c_str());
      status = 1;
    } else {
      const tca_harness::Table table(config.json, rank == 0);
      tca_harness::Report report("tca-cg", rank == 0);
      report.set("mode", alone ? "spmv-alone" : config.npb ? "npb" : "matrix");
      if (config.npb) report.set("class", std::string(1, config.npb->name));
      report.set("problem", problem.description);
      report.set("n", problem.layout.n);
      if (!alone) report.set("nnz", problem.nnz_total);  // alone: the block's, below
      report.set("ranks", alone ? config.spmv_alone : ranks);
      report.set("partition", partition_name(config.partition));
      report.set("device", device_name(config.device));
      if (config.device == Device::kCpu) report.set("threads_per_rank", config.threads);
      report.set("setup_s", problem.setup_seconds);
      if (config.npb && config.reference_iterations > 0)
        report.set("reference_iterations", config.reference_iterations);
      Outcome outcome;
      if (alone) {
        outcome.failed = run_spmv_alone(config, problem, table, report) != 0;
      } else {
        print_method(table, config, problem, ranks);
        run_configurations(config, problem, rank, ranks, table, report, outcome);
      }
      if (config.json) report.print();
      status = outcome.failed ? 2 : 0;
    }
  }
  release_shared_comms();
  if (tca) tca_harness::check(tcaFinalize(), "tcaFinalize");
  return status;
}

}  // namespace
}  // namespace tca_cg

int main(int argc, char** argv) {
  tca_harness::set_program_name("tca-cg");
  const std::string failure = tca_apps::start_control(&argc, &argv);
  if (!failure.empty()) tca_harness::die(failure);
  int status = 1;
  try {
    status = tca_cg::run(argc, argv);
  } catch (const std::exception& failure) {
    tca_harness::die(failure.what());
  }
  tca_apps::finish_control();
  return status;
}
