// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-cg's command line: what to solve, where, and over which communication.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "comm.h"
#include "engine.h"
#include "layout.h"
#include "npb_class.h"

namespace tca_cg {

struct Config {
  std::optional<NpbClass> npb;  // NPB mode
  std::string matrix_path;      // Matrix Market mode
  std::string rhs_path;
  int iterations = 1000;
  std::optional<double> tolerance;
  std::optional<double> max_error;
  Partition partition = Partition::kOneD;
  Device device = Device::kCpu;
  std::vector<CommKind> comms;
  std::vector<TcaExchange> tca_exchanges;  // --comm tca runs once with each
  std::vector<SpmvKind> spmvs;
  std::vector<CgVariant> variants;  // each in turn
  GpuOptions gpu;
  CommOptions comm;
  int threads = 1;
  int repetitions = 1;
  int reference_iterations = 0;  // NPB: outer iterations of --comm mpi runs (0: all)
  bool graph = true;
  bool breakdown = true;
  bool kernel_times = false;
  bool json = false;
  bool iterations_lines = true;
  // --spmv-alone: no CG; the SpMV of rank spmv_block's block of a run on spmv_alone ranks,
  // timed alone (spmv_alone.h); 0: CG.
  int spmv_alone = 0;
  int spmv_block = 0;
  int spmv_calls = 200;  // timed calls per kernel, variant and repetition
};

// Parses and checks the command line on every rank (only rank 0 prints). nullopt: go on with
// *config; else the exit code (0 after --help).
std::optional<int> parse_config(int argc, char** argv, int rank, int ranks, int ranks_on_host,
                                Config* config);

const char* spmv_name(SpmvKind kind);

}  // namespace tca_cg
