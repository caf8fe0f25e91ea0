// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/check.h"

#ifdef TCA_HARNESS_MPI
#include <mpi.h>
#endif

#include <cstdio>
#include <cstdlib>

namespace tca_harness {
namespace {

std::string& name_storage() {
  static std::string name = "tca";
  return name;
}

#ifdef TCA_HARNESS_MPI
bool mpi_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}
#endif

}  // namespace

void set_program_name(const std::string& name) { name_storage() = name; }

const std::string& program_name() { return name_storage(); }

void die(const std::string& message) {
  int rank = -1;
#ifdef TCA_HARNESS_MPI
  const bool mpi = mpi_running();
  if (mpi) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#else
  const bool mpi = false;
#endif
  if (!mpi && tcaRank(&rank) != TCA_SUCCESS) rank = -1;  // before tcaInit, or after tcaFinalize
  if (rank >= 0)
    std::fprintf(stderr, "%s: rank %d: %s\n", program_name().c_str(), rank, message.c_str());
  else
    std::fprintf(stderr, "%s: %s\n", program_name().c_str(), message.c_str());
  std::fflush(stderr);
#ifdef TCA_HARNESS_MPI
  if (mpi) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  std::exit(1);
}

std::string describe_failure(tcaResult result, const char* call) {
  const std::string detail = tcaGetLastErrorMessage();  // starts with the error's name
  return std::string(call) + ": " + (detail.empty() ? tcaGetErrorString(result) : detail);
}

void check(tcaResult result, const char* call) {
  if (result != TCA_SUCCESS) die(describe_failure(result, call));
}

}  // namespace tca_harness
