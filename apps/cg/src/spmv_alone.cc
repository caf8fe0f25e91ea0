// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "spmv_alone.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm.h"
#include "engine.h"
#include "phases.h"
#include "report.h"

namespace tca_cg {
namespace {

// Each row's sum and the sum of its entries' magnitudes (the check's scale).
struct RowSums {
  std::vector<double> sum;
  std::vector<double> scale;
};

RowSums row_sums(const LocalCsr& matrix) {
  RowSums out;
  out.sum.assign(matrix.rows, 0.0);
  out.scale.assign(matrix.rows, 0.0);
  for (int64_t r = 0; r < matrix.rows; ++r) {
    for (int64_t k = matrix.row_ptr[r]; k < matrix.row_ptr[r + 1]; ++k) {
      out.sum[r] += matrix.val[k];
      out.scale[r] += std::fabs(matrix.val[k]);
    }
  }
  return out;
}

// The worst difference of y from the row sums, relative to the row's scale (NaN counts as
// infinitely wrong).
double worst_error(const std::vector<double>& y, const RowSums& sums) {
  double worst = 0.0;
  for (size_t r = 0; r < y.size(); ++r) {
    const double error = std::fabs(y[r] - sums.sum[r]) / std::max(sums.scale[r], 1e-300);
    if (!(error <= worst)) worst = std::isnan(error) ? INFINITY : error;
  }
  return worst;
}

std::unique_ptr<Engine> make_alone_engine(const Config& config, const Layout& layout,
                                          SpmvKind spmv) {
  if (config.device == Device::kGpu)
    return make_gpu_engine(layout, gpu_allocator(), 0, spmv, config.gpu);
  return make_cpu_engine(layout, host_allocator(), 0, config.threads, spmv);
}

struct Measured {
  std::string engine;
  std::string kernel;
  std::string choice;
  double error = 0.0;
  double seconds_per_call = 0.0;
  double bytes_per_call = 0.0;
  std::optional<KernelTimesSummary> kernels;  // --kernel-times: per call ("steps" are calls)
};

// --kernel-times: a graph of kKernelTimeCalls calls whose kernels record their own times,
// replayed three times; the last replay's launches summed per kernel.
constexpr int kKernelTimeCalls = 10;
KernelTimesSummary time_kernels(Engine& engine, bool fuse) {
  const std::vector<KernelTime> launches = engine.kernel_times(
      [&] {
        for (int k = 0; k < kKernelTimeCalls; ++k) engine.spmv(fuse);
      },
      3);
  return summarize_kernel_times(launches, kKernelTimeCalls);
}

void print_kernels(const tca_harness::Table& out, const KernelTimesSummary& summary,
                   const std::string& kernel) {
  tca_harness::Table table(out.stream(), out.active());
  using tca_harness::Align;
  table.set_columns({{"spmv", 12, Align::kLeft},
                     {"kernel", 14, Align::kLeft},
                     {"per call", 10, Align::kRight, 2, "(us)"},
                     {"gap before", 11, Align::kRight, 2, "(us)"}});
  table.comment(tca_harness::format(
      "kernel times: %d calls in a CUDA graph, each kernel's own clock readings, per call",
      kKernelTimeCalls));
  table.header();
  table.units();
  const double calls = static_cast<double>(std::max(1L, summary.steps));
  for (const KernelTotal& k : summary.kernels)
    table.row({kernel, k.name, k.busy_us / calls, k.gap_us / calls});
  table.comment(tca_harness::format("span %.2f us per call", summary.span_us / calls));
}

// One configuration: the engine made, the first call checked, the warm-up, the timed span, its
// last call checked.
Measured measure(const Config& config, const Problem& problem, const RowSums& sums, SpmvKind spmv,
                 CgVariant variant) {
  std::unique_ptr<Engine> engine = make_alone_engine(config, problem.layout, spmv);
  engine->set_variant(variant);
  engine->set_matrix(problem.matrix);  // a copy: every configuration starts from the block
  Measured out;
  out.engine = engine->describe();
  out.kernel = engine->spmv_kernel();
  out.choice = engine->spmv_choice();
  out.bytes_per_call = engine->spmv_bytes();
  const bool fuse = engine->fuses_dots();
  engine->fill_p_full(1.0);
  engine->spmv(fuse);
  std::vector<double> y(problem.matrix.rows);
  engine->download(y.data(), engine->buffers().w, y.size());
  out.error = worst_error(y, sums);
  for (int k = 0; k < std::max(3, config.spmv_calls / 10); ++k) engine->spmv(fuse);
  std::unique_ptr<PhaseClock> clock = engine->make_clock();
  clock->mark(Phase::kSpmv);
  for (int k = 0; k < config.spmv_calls; ++k) engine->spmv(fuse);
  clock->mark(Phase::kNone);
  clock->collect();
  engine->synchronize();
  out.seconds_per_call =
      clock->seconds()[static_cast<int>(Phase::kSpmv)] / static_cast<double>(config.spmv_calls);
  engine->download(y.data(), engine->buffers().w, y.size());  // the last timed call's result
  out.error = std::max(out.error, worst_error(y, sums));
  if (config.kernel_times) out.kernels = time_kernels(*engine, fuse);
  return out;
}

void set_columns(tca_harness::Table& table) {
  using tca_harness::Align;
  table.set_columns({{"kernel", 12, Align::kLeft},
                     {"variant", 16, Align::kLeft},
                     {"rep", 3},
                     {"time", 10, Align::kRight, 2, "(us)"},
                     {"moved", 10, Align::kRight, 1, "(MB)"},
                     {"bandwidth", 10, Align::kRight, 1, "(GB/s)"},
                     {"check", 10, Align::kRight, 0, "(rel.err)"}});
}

constexpr double kTolerance = 1e-12;  // of y against the row sums, relative to a row's magnitudes

// One configuration's row, its kernel times and its JSON row; false where the check failed.
bool report_configuration(const Measured& m, SpmvKind spmv, CgVariant variant, int repetition,
                          const tca_harness::Table& table, tca_harness::Report& report) {
  const bool ok = m.error <= kTolerance;
  const std::string kernel = m.kernel.empty() ? spmv_name(spmv) : m.kernel;
  const double gbps = m.bytes_per_call / m.seconds_per_call * 1e-9;
  table.row({kernel, cg_variant_name(variant), repetition, m.seconds_per_call * 1e6,
             m.bytes_per_call * 1e-6, gbps, tca_harness::format("%.1e", m.error)});
  if (!ok) {
    table.line(tca_harness::format(" ERROR: y differs from the row sums by %.3e (%s)", m.error,
                                   kernel.c_str()));
  }
  nlohmann::ordered_json row = {{"spmv", spmv_name(spmv)},
                                {"spmv_kernel", kernel},
                                {"spmv_choice", m.choice},
                                {"cg_variant", cg_variant_name(variant)},
                                {"repetition", repetition},
                                {"engine", m.engine},
                                {"us_per_call", m.seconds_per_call * 1e6},
                                {"bytes_per_call", m.bytes_per_call},
                                {"gb_per_s", gbps},
                                {"check_relative_error", m.error},
                                {"verified", ok}};
  if (m.kernels) {
    print_kernels(table, *m.kernels, kernel);
    row["kernel_times"] = kernel_times_json(*m.kernels);
  }
  report.add_row(std::move(row));
  return ok;
}

}  // namespace

int run_spmv_alone(const Config& config, const Problem& problem, const tca_harness::Table& out,
                   tca_harness::Report& report) {
  const Layout& layout = problem.layout;
  const MatrixBlock& block = layout.block;
  tca_harness::Table table = out;
  set_columns(table);
  table.comment(tca_harness::format(
      "spmv alone: rank %d's block of %d (%s): rows [%lld, %lld), columns [%lld, %lld), %lld "
      "nonzeros; no communication, x = 1, y checked against the row sums (relative error <= "
      "%.0e), then %d calls timed after %d warm-up calls",
      layout.rank, layout.ranks, partition_name(layout.partition),
      static_cast<long long>(block.row_begin), static_cast<long long>(block.row_end),
      static_cast<long long>(block.col_begin), static_cast<long long>(block.col_end),
      static_cast<long long>(problem.matrix.nnz()), kTolerance, config.spmv_calls,
      std::max(3, config.spmv_calls / 10)));
  const RowSums sums = row_sums(problem.matrix);
  report.set("spmv_alone_ranks", layout.ranks);
  report.set("spmv_alone_block", layout.rank);
  report.set("block_rows", block.row_end - block.row_begin);
  report.set("block_cols", block.col_end - block.col_begin);
  report.set("block_nnz", problem.matrix.nnz());
  report.set("spmv_calls", config.spmv_calls);
  bool header = false;
  int status = 0;
  for (int repetition = 1; repetition <= config.repetitions; ++repetition) {
    for (SpmvKind spmv : config.spmvs) {
      for (CgVariant variant : config.variants) {
        const Measured m = measure(config, problem, sums, spmv, variant);
        if (!header || m.kernels) {  // each kernel-times table is followed by a header again
          table.comment(m.engine);
          table.header();
          table.units();
          header = true;
        }
        if (!report_configuration(m, spmv, variant, repetition, table, report)) status = 2;
      }
    }
  }
  return status;
}

}  // namespace tca_cg
