// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "problem.h"

#include <exception>

#include "control.h"
#include "mtx_reader.h"
#include "npb_matrix.h"
#include "tca_harness/timer.h"

namespace tca_cg {

std::string first_error(const std::string& mine) {
  const int rank = tca_apps::rank(), ranks = tca_apps::size();
  const int first = tca_apps::allreduce<int32_t>(mine.empty() ? ranks : rank, tca_apps::Op::kMin);
  if (first == ranks) return "";
  std::string message = rank == first ? mine : std::string();
  int length = static_cast<int>(message.size());
  tca_apps::broadcast(&length, sizeof length, first);
  message.resize(length);
  tca_apps::broadcast(message.data(), message.size(), first);
  return message;
}

namespace {

// Runs `step`, turning any exception into this rank's message, then agrees.
template <class Step>
std::string agreed(Step&& step) {
  std::string mine;
  try {
    step();
  } catch (const std::exception& error) {
    mine = error.what();
    if (mine.empty()) mine = "unknown error";
  }
  return first_error(mine);
}

std::string build_npb(const Config& config, int rank, int ranks, Problem* problem) {
  const NpbClass& cls = *config.npb;
  problem->layout = make_layout(config.partition, cls.na, ranks, rank);
  problem->description = std::string("NPB CG class ") + cls.name;
  return agreed(
      [&] { problem->matrix = generate_npb_block(cls, problem->layout.block, config.threads); });
}

std::string build_mtx(const Config& config, int rank, int ranks, Problem* problem) {
  MtxInfo info;
  std::string error = agreed([&] { info = read_mtx_info(config.matrix_path); });
  if (!error.empty()) return error;
  if (!info.coordinate)
    return config.matrix_path + ": the matrix must be in coordinate format, not array";
  if (info.rows != info.cols) {
    return config.matrix_path + ": the matrix is " + std::to_string(info.rows) + " x " +
           std::to_string(info.cols) + "; CG needs a square matrix";
  }
  problem->layout = make_layout(config.partition, info.rows, ranks, rank);
  problem->description = config.matrix_path + ": " + mtx_field_name(info.field) +
                         (info.symmetric ? " symmetric" : " general") + ", " +
                         std::to_string(info.rows) + " x " + std::to_string(info.cols) + ", " +
                         std::to_string(info.entries) + " stored entries";
  LocalCsr transposed;
  error = agreed([&] {
    problem->matrix = read_mtx_block(config.matrix_path, info, problem->layout.block,
                                     info.symmetric ? nullptr : &transposed);
  });
  if (!error.empty()) return error;
  if (!info.symmetric) {
    std::optional<std::string> asymmetry = check_block_symmetry(problem->matrix, transposed);
    transposed = LocalCsr();
    error = first_error(asymmetry ? config.matrix_path + ": not symmetric: " + *asymmetry +
                                        "; CG needs a symmetric positive definite matrix"
                                  : "");
    if (!error.empty()) return error;
  }
  const std::optional<std::string> diagonal = check_block_diagonal(problem->matrix, info.rows);
  error = first_error(diagonal ? config.matrix_path + ": " + *diagonal : "");
  if (!error.empty()) return error;
  if (!config.rhs_path.empty()) {
    error = agreed([&] {
      problem->rhs = read_mtx_vector_piece(config.rhs_path, info.rows, problem->layout.own_begin,
                                           problem->layout.piece);
    });
  }
  return error;
}

}  // namespace

std::string build_problem(const Config& config, int rank, int ranks, Problem* problem) {
  const tca_harness::Timer timer;
  const std::string error = config.npb ? build_npb(config, rank, ranks, problem)
                                       : build_mtx(config, rank, ranks, problem);
  if (!error.empty()) return error;
  problem->nnz_total = tca_apps::allreduce<int64_t>(problem->matrix.nnz(), tca_apps::Op::kSum);
  problem->setup_seconds = tca_apps::allreduce<double>(timer.seconds(), tca_apps::Op::kMax);
  return "";
}

}  // namespace tca_cg
