// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-cg's output: NPB's result block, the solve summary, the breakdown table and the JSON
// rows (harness Table and Report).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config.h"
#include "kernel_times.h"
#include "problem.h"
#include "solver.h"
#include "tca_harness/table.h"

namespace tca_cg {

// One configuration of the run: which communication, which SpMV, which repetition.
struct RunLabel {
  CommKind comm;
  SpmvKind spmv;
  int repetition;
  std::string engine;       // the engine's description
  std::string spmv_kernel;  // the SpMV kernel that ran (Engine::spmv_kernel)
  std::string spmv_choice;  // why, where chosen by shape (Engine::spmv_choice)
  TcaExchange tca_exchange = TcaExchange::kColl;
  bool has_tca_exchange = false;  // tca between several ranks: the exchange is part of the label
  CgVariant variant = CgVariant::kClassic;
};

// The breakdown over all ranks (collective): per phase the mean and the max of the ranks'
// seconds, and rank 0's number of calls.
struct BreakdownSummary {
  PhaseSeconds mean{};
  PhaseSeconds max{};
  PhaseCalls calls{};
  double total_max = 0;
  double total_mean = 0;
  bool separate_run = false;
  bool graph = false;     // the separate run replayed a CUDA graph
  long steps = 0;         // CG steps the per-step figures divide by
  double spmv_bytes = 0;  // bytes one SpMV moves, all ranks together (matrix, offsets, x, y)
  int ranks = 1;
};
// spmv_bytes: what one SpMV moves on this rank (Engine::spmv_bytes).
BreakdownSummary summarize_breakdown(const Breakdown& breakdown, long steps, double spmv_bytes);

// '#' lines that state the method, before any run.
void print_method(const tca_harness::Table& table, const Config& config, const Problem& problem,
                  int ranks);

void print_npb(const tca_harness::Table& table, const Config& config, const Problem& problem,
               const NpbResult& result, const RunLabel& label, int ranks);
void print_solve(const tca_harness::Table& table, const Config& config, const Problem& problem,
                 const SolveResult& result, const RunLabel& label);
void print_breakdown(const tca_harness::Table& table, const BreakdownSummary& summary,
                     const RunLabel& label);

nlohmann::ordered_json npb_row(const Config& config, const Problem& problem,
                               const NpbResult& result, const RunLabel& label,
                               const BreakdownSummary& summary, int ranks);
nlohmann::ordered_json solve_row(const Problem& problem, const SolveResult& result,
                                 const RunLabel& label, const BreakdownSummary& summary);

// Kernel times over all ranks (collective: every rank passes its launches, the same kernels in
// the same order): each figure the slowest rank's.
KernelTimesSummary summarize_kernel_times(const std::vector<KernelTime>& launches, long steps);
void print_kernel_times(const tca_harness::Table& table, const KernelTimesSummary& summary,
                        const std::string& comm);
nlohmann::ordered_json kernel_times_json(const KernelTimesSummary& summary);

// The error figure of a solve: ||x - ones|| / sqrt(n).
double solve_error(const Problem& problem, const SolveResult& result);

}  // namespace tca_cg
