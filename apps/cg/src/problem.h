// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// This rank's part of the problem: the layout, its block of A (generated or read) and, for
// --rhs, its piece of b. Input errors are agreed on by all ranks before anything runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "csr.h"
#include "layout.h"

namespace tca_cg {

struct Problem {
  Layout layout;
  LocalCsr matrix;
  int64_t nnz_total = 0;  // over all ranks
  std::optional<std::vector<double>> rhs;
  std::string description;   // "NPB class B" or "m.mtx: real symmetric"
  double setup_seconds = 0;  // slowest rank
};

// Collective. "" on success; else the message of the lowest rank that found a problem, on
// every rank.
std::string build_problem(const Config& config, int rank, int ranks, Problem* problem);

// Collective: "" when no rank has a message, else the lowest such rank's message.
std::string first_error(const std::string& mine);

}  // namespace tca_cg
