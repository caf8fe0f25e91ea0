// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "report.h"

#include <algorithm>
#include <cmath>

#include "control.h"
#include "npb_class.h"

namespace tca_cg {

using tca_harness::format;
using tca_harness::Table;

namespace {

double per_step_us(double seconds, long steps) { return steps > 0 ? seconds / steps * 1e6 : 0.0; }

// The timed region's seconds for all of the class's iterations (scaled from fewer).
double full_seconds(const NpbClass& cls, const NpbResult& result) {
  return result.iterations_run > 0 ? result.seconds * cls.niter / result.iterations_run
                                   : result.seconds;
}

std::string exchange_text(const Layout& layout) {
  const double kib = layout.piece * 8.0 / 1024.0;
  if (layout.ranks == 1) return "one rank: no communication";
  if (layout.partition == Partition::kOneD) {
    return format(
        "1d: allgather of p, %d pieces of %lld doubles (%.1f KiB) received per rank and SpMV",
        layout.ranks - 1, static_cast<long long>(layout.piece), kib);
  }
  return format(
      "2d %dx%d: p's pieces along block columns (%d x %.1f KiB received per rank and SpMV), "
      "partial products summed along block rows (%d x %.1f KiB)",
      layout.grid, layout.grid, layout.grid - 1, kib, layout.grid - 1, kib);
}

}  // namespace

double solve_error(const Problem& problem, const SolveResult& result) {
  return result.error_norm ? *result.error_norm / std::sqrt(static_cast<double>(problem.layout.n))
                           : 0.0;
}

BreakdownSummary summarize_breakdown(const Breakdown& breakdown, long steps, double spmv_bytes) {
  BreakdownSummary summary;
  using tca_apps::Op;
  const int ranks = tca_apps::size();
  tca_apps::allreduce(breakdown.seconds.data(), summary.max.data(), kPhaseCount, Op::kMax);
  tca_apps::allreduce(breakdown.seconds.data(), summary.mean.data(), kPhaseCount, Op::kSum);
  for (double& value : summary.mean) value /= ranks;
  summary.total_max = tca_apps::allreduce(breakdown.total, Op::kMax);
  summary.total_mean = tca_apps::allreduce(breakdown.total, Op::kSum);
  summary.total_mean /= ranks;
  summary.calls = breakdown.calls;
  tca_apps::broadcast(summary.calls.data(), sizeof(summary.calls[0]) * kPhaseCount, 0);
  summary.separate_run = breakdown.separate_run;
  summary.graph = breakdown.graph;
  summary.steps = steps;
  summary.spmv_bytes = tca_apps::allreduce(spmv_bytes, Op::kSum);
  summary.ranks = ranks;
  return summary;
}

void print_method(const Table& table, const Config& config, const Problem& problem, int ranks) {
  const Layout& layout = problem.layout;
  table.comment(format("tca-cg: %s, n = %lld, %lld nonzeros", problem.description.c_str(),
                       static_cast<long long>(layout.n),
                       static_cast<long long>(problem.nnz_total)));
  table.comment(
      format("%d rank%s, %s partition, device %s%s; setup (generate or read, check) %.2f s", ranks,
             ranks == 1 ? "" : "s", partition_name(layout.partition), device_name(config.device),
             config.device == Device::kCpu
                 ? format(" (%d thread%s per rank)", config.threads, config.threads == 1 ? "" : "s")
                       .c_str()
                 : "",
             problem.setup_seconds));
  table.comment("exchange: " + exchange_text(layout));
  if (config.npb) {
    table.comment(format(
        "time: NPB's timed region, %d outer iterations of %d CG steps (+ residual and norms) "
        "after one untimed iteration; slowest rank",
        config.npb->niter, kNpbCgSteps));
  } else {
    table.comment(
        "time: the CG steps (b, the final residual and the error are outside it); slowest rank");
  }
  table.comment(
      config.device == Device::kGpu
          ? (config.graph
                 ? "breakdown: time per phase from CUDA events between the phases, in a second run "
                   "of the same iterations replaying a CUDA graph with the events inside it (MPI: "
                   "launched from the host; the timed run has no events)"
                 : "breakdown: time per phase from CUDA events between the phases, in a second run "
                   "of the same iterations launched from the host (the timed run has no events)")
          : "breakdown: wall-clock time per phase inside the timed run; mean and max over ranks");
  if (config.npb && config.reference_iterations > 0 &&
      config.reference_iterations < config.npb->niter) {
    table.comment(
        format("--comm mpi: %d of the class's %d iterations (--reference-iterations), "
               "not verified; its time is also given scaled to %d",
               config.reference_iterations, config.npb->niter, config.npb->niter));
  }
}

void print_npb(const Table& table, const Config& config, const Problem& problem,
               const NpbResult& result, const RunLabel& label, int ranks) {
  const NpbClass& cls = *config.npb;
  const bool complete = npb_complete(cls, result);
  const bool verified = complete && npb_verified(cls, result.zeta);
  const double mops = npb_mops(cls, full_seconds(cls, result));
  table.line("");
  table.line(format(" == comm %s%s, %s, repetition %d ==", comm_name(label.comm),
                    label.has_tca_exchange
                        ? (std::string(" (") + tca_exchange_name(label.tca_exchange) + ")").c_str()
                        : "",
                    label.engine.c_str(), label.repetition));
  if (config.iterations_lines) {
    table.line("   iteration           ||r||                 zeta");
    for (const NpbIteration& it : result.iterations) {
      table.line(format("    %5d       %20.14E%20.13f", it.iteration, it.rnorm, it.zeta));
    }
  }
  table.line(format(" Benchmark completed"));
  if (!complete) {
    table.line(
        format(" VERIFICATION SKIPPED: %d of the class's %d iterations timed "
               "(--reference-iterations); zeta after them is not the class's",
               result.iterations_run, cls.niter));
  } else {
    table.line(verified ? " VERIFICATION SUCCESSFUL" : " VERIFICATION FAILED");
  }
  table.line(format(" Zeta is    %20.13E", result.zeta));
  table.line(format(" Error is   %20.13E", npb_zeta_error(cls, result.zeta)));
  table.line("");
  table.line(" CG Benchmark Completed.");
  table.line(format(" Class           =  %24c", cls.name));
  table.line(format(" Size            =  %24lld", static_cast<long long>(cls.na)));
  table.line(format(" Iterations      =  %24d", result.iterations_run));
  table.line(format(" Time in seconds =  %24.4f", result.seconds));
  if (!complete) {
    table.line(format(" Time for %3d it =  %24.4f (%d iterations timed, scaled)", cls.niter,
                      full_seconds(cls, result), result.iterations_run));
  }
  table.line(format(" Total processes =  %24d", ranks));
  table.line(format(" Mop/s total     =  %24.2f", mops));
  table.line(format(" Mop/s/process   =  %24.2f", mops / ranks));
  table.line(format(" Operation type  =  %24s", "floating point"));
  table.line(format(" Verification    =  %24s", !complete  ? "SKIPPED"
                                                : verified ? "SUCCESSFUL"
                                                           : "UNSUCCESSFUL"));
  table.line(format(" Communication   =  %24s", comm_name(label.comm)));
  table.line(format(" Partition       =  %24s", partition_name(problem.layout.partition)));
  table.line(format(" Device          =  %24s", device_name(config.device)));
  table.line(format(" CUDA graphs     =  %24s", result.graph ? "yes" : "no"));
}

void print_solve(const Table& table, const Config& config, const Problem& problem,
                 const SolveResult& result, const RunLabel& label) {
  table.line("");
  table.line(format(" == comm %s, %s, repetition %d ==", comm_name(label.comm),
                    label.engine.c_str(), label.repetition));
  table.line(format(" CG iterations        = %d%s", result.iterations,
                    config.tolerance
                        ? (result.converged ? " (tolerance reached)" : " (tolerance NOT reached)")
                        : ""));
  table.line(format(" Time in seconds      = %.6f (%.3f us per iteration)", result.seconds,
                    per_step_us(result.seconds, result.iterations)));
  table.line(format(" ||b||                = %.6e", result.rhs_norm));
  table.line(format(" ||b - A x|| / ||b||  = %.6e (recomputed; the recursive residual gives %.6e)",
                    result.rhs_norm > 0 ? result.residual_norm / result.rhs_norm : 0.0,
                    result.rhs_norm > 0 ? result.recursive_residual_norm / result.rhs_norm : 0.0));
  if (result.error_norm) {
    table.line(format(" ||x - 1|| / sqrt(n)  = %.6e (b = A * ones)", solve_error(problem, result)));
  }
  table.line(format(" CUDA graphs          = %s", result.graph ? "yes" : "no"));
}

void print_breakdown(const Table& table, const BreakdownSummary& summary, const RunLabel& label) {
  Table breakdown(table.stream(), table.active());
  breakdown.set_columns({{"comm", 6, tca_harness::Align::kLeft},
                         {"phase", 10, tca_harness::Align::kLeft},
                         {"calls", 8},
                         {"mean (s)", 10, tca_harness::Align::kRight, 5},
                         {"max (s)", 10, tca_harness::Align::kRight, 5},
                         {"per step (us)", 14, tca_harness::Align::kRight, 2},
                         {"share (%)", 10, tca_harness::Align::kRight, 1}});
  table.line("");
  breakdown.comment(format(
      "breakdown%s over %ld CG steps (%s): mean and max over ranks; per step and share from "
      "the max",
      summary.separate_run
          ? (summary.graph ? " (separate run, graph replays)" : " (separate run, host launches)")
          : "",
      summary.steps, comm_name(label.comm)));
  breakdown.header();
  double listed = 0;
  for (int k = 0; k < kPhaseCount; ++k) {
    listed += summary.mean[k];
    breakdown.row({comm_name(label.comm), phase_name(static_cast<Phase>(k)), summary.calls[k],
                   summary.mean[k], summary.max[k], per_step_us(summary.max[k], summary.steps),
                   summary.total_max > 0 ? 100.0 * summary.max[k] / summary.total_max : 0.0});
  }
  breakdown.comment(format(
      "run %.5f s (slowest rank); the phases cover %.1f%% of a rank's run (means)",
      summary.total_max, summary.total_mean > 0 ? 100.0 * listed / summary.total_mean : 0.0));
  const long spmvs = summary.calls[static_cast<int>(Phase::kSpmv)];
  const double spmv_seconds = summary.max[static_cast<int>(Phase::kSpmv)];
  if (spmvs > 0 && spmv_seconds > 0) {
    // Per rank: the ranks' mean bytes over the slowest rank's time.
    const double all = summary.spmv_bytes * spmvs / spmv_seconds / 1e9;
    breakdown.comment(format(
        "spmv: %.2f us per call, %.1f GB/s per rank, %.1f GB/s all ranks (%.1f MB per call and "
        "rank, %.1f MB all ranks, in this format: matrix, offsets, x, y)",
        spmv_seconds / spmvs * 1e6, all / summary.ranks, all,
        summary.spmv_bytes / summary.ranks / 1e6, summary.spmv_bytes / 1e6));
  }
}

namespace {

nlohmann::ordered_json breakdown_json(const BreakdownSummary& summary) {
  nlohmann::ordered_json phases = nlohmann::ordered_json::array();
  for (int k = 0; k < kPhaseCount; ++k) {
    phases.push_back({{"phase", phase_name(static_cast<Phase>(k))},
                      {"calls", summary.calls[k]},
                      {"mean_s", summary.mean[k]},
                      {"max_s", summary.max[k]},
                      {"per_step_us", per_step_us(summary.max[k], summary.steps)}});
  }
  nlohmann::ordered_json out = {{"separate_run", summary.separate_run},
                                {"graph", summary.graph},
                                {"total_s", summary.total_max},
                                {"steps", summary.steps},
                                {"phases", phases}};
  const long spmvs = summary.calls[static_cast<int>(Phase::kSpmv)];
  const double spmv_seconds = summary.max[static_cast<int>(Phase::kSpmv)];
  if (spmvs > 0 && spmv_seconds > 0) {
    const double all = summary.spmv_bytes * spmvs / spmv_seconds / 1e9;
    out["spmv_us"] = spmv_seconds / spmvs * 1e6;
    out["spmv_GBps"] = all;
    out["spmv_GBps_per_rank"] = all / summary.ranks;
    out["spmv_bytes"] = summary.spmv_bytes;
  }
  return out;
}

nlohmann::ordered_json label_json(const RunLabel& label) {
  nlohmann::ordered_json out = {{"comm", comm_name(label.comm)},
                                {"spmv", spmv_name(label.spmv)},
                                {"repetition", label.repetition},
                                {"engine", label.engine}};
  if (label.has_tca_exchange) out["tca_exchange"] = tca_exchange_name(label.tca_exchange);
  out["cg_variant"] = cg_variant_name(label.variant);
  if (!label.spmv_kernel.empty()) out["spmv_kernel"] = label.spmv_kernel;
  if (!label.spmv_choice.empty()) out["spmv_choice"] = label.spmv_choice;
  return out;
}

}  // namespace

nlohmann::ordered_json npb_row(const Config& config, const Problem&, const NpbResult& result,
                               const RunLabel& label, const BreakdownSummary& summary, int ranks) {
  const NpbClass& cls = *config.npb;
  nlohmann::ordered_json row = label_json(label);
  const bool complete = npb_complete(cls, result);
  const double mops = npb_mops(cls, full_seconds(cls, result));
  row["graph"] = result.graph;
  row["niter"] = cls.niter;
  row["iterations_run"] = result.iterations_run;
  // Fewer iterations (--reference-iterations): time_s is theirs; time_full_s scales it to the
  // class's count; nothing can be verified.
  row["time_s"] = result.seconds;
  row["time_full_s"] = full_seconds(cls, result);
  row["mops_total"] = mops;
  row["mops_per_process"] = mops / ranks;
  row["zeta"] = result.zeta;
  row["zeta_error"] = npb_zeta_error(cls, result.zeta);
  row["verified"] = complete && npb_verified(cls, result.zeta);
  row["verification"] = !complete                        ? "skipped (fewer iterations)"
                        : npb_verified(cls, result.zeta) ? "successful"
                                                         : "failed";
  nlohmann::ordered_json iterations = nlohmann::ordered_json::array();
  for (const NpbIteration& it : result.iterations) {
    iterations.push_back({{"iteration", it.iteration}, {"rnorm", it.rnorm}, {"zeta", it.zeta}});
  }
  row["iterations"] = iterations;
  row["breakdown"] = breakdown_json(summary);
  return row;
}

nlohmann::ordered_json solve_row(const Problem& problem, const SolveResult& result,
                                 const RunLabel& label, const BreakdownSummary& summary) {
  nlohmann::ordered_json row = label_json(label);
  row["graph"] = result.graph;
  row["iterations"] = result.iterations;
  row["time_s"] = result.seconds;
  row["converged"] = result.converged;
  row["rhs_norm"] = result.rhs_norm;
  row["relative_residual"] = result.rhs_norm > 0 ? result.residual_norm / result.rhs_norm : 0.0;
  row["relative_recursive_residual"] =
      result.rhs_norm > 0 ? result.recursive_residual_norm / result.rhs_norm : 0.0;
  if (result.error_norm) row["error"] = solve_error(problem, result);
  row["breakdown"] = breakdown_json(summary);
  return row;
}

KernelTimesSummary summarize_kernel_times(const std::vector<KernelTime>& launches, long steps) {
  KernelTimesSummary summary = sum_kernel_times(launches, steps);
  // The slowest rank's figure of each kernel (every rank has the same kernels in order).
  std::vector<double> mine;
  for (const KernelTotal& k : summary.kernels) {
    mine.insert(mine.end(), {k.busy_us, k.peer_wait_us, k.gap_us});
  }
  mine.push_back(summary.span_us);
  std::vector<double> work;
  for (const KernelTotal& k : summary.kernels) work.push_back(k.work_max_us);
  std::vector<double> slowest(mine.size()), work_max(work.size()), work_min(work.size());
  tca_apps::allreduce(mine.data(), slowest.data(), mine.size(), tca_apps::Op::kMax);
  tca_apps::allreduce(work.data(), work_max.data(), work.size(), tca_apps::Op::kMax);
  tca_apps::allreduce(work.data(), work_min.data(), work.size(), tca_apps::Op::kMin);
  for (size_t i = 0; i < summary.kernels.size(); ++i) {
    summary.kernels[i].busy_us = slowest[3 * i];
    summary.kernels[i].peer_wait_us = slowest[3 * i + 1];
    summary.kernels[i].gap_us = slowest[3 * i + 2];
    summary.kernels[i].work_max_us = work_max[i];
    summary.kernels[i].work_min_us = work_min[i];
  }
  summary.span_us = slowest.back();
  return summary;
}

void print_kernel_times(const tca_harness::Table& table, const KernelTimesSummary& summary,
                        const std::string& comm) {
  tca_harness::Table kernels(table.stream(), table.active());
  kernels.set_columns({{"comm", 6, tca_harness::Align::kLeft},
                       {"kernel", 14, tca_harness::Align::kLeft},
                       {"launches", 9},
                       {"per step (us)", 14, tca_harness::Align::kRight, 2},
                       {"peers (us)", 11, tca_harness::Align::kRight, 2},
                       {"gap before (us)", 16, tca_harness::Align::kRight, 2},
                       {"work max (us)", 14, tca_harness::Align::kRight, 2},
                       {"work min (us)", 14, tca_harness::Align::kRight, 2}});
  table.line("");
  const double steps = static_cast<double>(std::max(1L, summary.steps));
  kernels.comment(format(
      "kernel times (%s): one outer iteration replayed with each kernel's own clock readings; "
      "per CG step over %ld steps, slowest rank; peers: its blocks' waits for the peers; gap: "
      "from the previous kernel's end (negative: launched early, overlapping it); work: the "
      "kernel's time less its waits for the peers, on the ranks where it is largest and smallest",
      comm.c_str(), summary.steps));
  kernels.header();
  double busy = 0, gaps = 0;
  for (const KernelTotal& k : summary.kernels) {
    kernels.row({comm, k.name, k.launches, k.busy_us / steps, k.peer_wait_us / steps,
                 k.gap_us / steps, k.work_max_us / steps, k.work_min_us / steps});
    busy += k.busy_us;
    gaps += k.gap_us;
  }
  kernels.comment(format("span %.2f us per step: kernels %.2f, gaps %.2f (slowest rank each)",
                         summary.span_us / steps, busy / steps, gaps / steps));
}

nlohmann::ordered_json kernel_times_json(const KernelTimesSummary& summary) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  const double steps = static_cast<double>(std::max(1L, summary.steps));
  for (const KernelTotal& k : summary.kernels) {
    kernels.push_back({{"kernel", k.name},
                       {"launches", k.launches},
                       {"per_step_us", k.busy_us / steps},
                       {"peer_wait_per_step_us", k.peer_wait_us / steps},
                       {"gap_before_per_step_us", k.gap_us / steps},
                       {"work_max_per_step_us", k.work_max_us / steps},
                       {"work_min_per_step_us", k.work_min_us / steps}});
  }
  return {{"steps", summary.steps},
          {"span_per_step_us", summary.span_us / steps},
          {"kernels", kernels}};
}

}  // namespace tca_cg
