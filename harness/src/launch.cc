// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/launch.h"

#ifdef TCA_HARNESS_MPI
#include <mpi.h>
#endif

#include <climits>
#include <cstdlib>
#include <cstring>

#include "tca_harness/check.h"

extern char** environ;

namespace tca_harness {
namespace {

bool has_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

// A variable Open MPI's launcher sets (OMPI_*), not one a user sets to configure Open MPI
// (OMPI_MCA_*).
bool has_open_mpi_launch_variable() {
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry)
    if (std::strncmp(*entry, "OMPI_", 5) == 0 && std::strncmp(*entry, "OMPI_MCA_", 9) != 0)
      return true;
  return false;
}

bool started_mpi = false;

}  // namespace

std::string mpi_launch_missing() {
  const char* bootstrap = std::getenv("TCA_BOOTSTRAP");
  const std::string chosen = bootstrap != nullptr ? bootstrap : "";
  if (chosen == "mpi") return "";
  if (has_env("TCA_RANK") || has_env("TCA_ROOT"))
    return "started by tca-run or the tcp bootstrap's variables (TCA_RANK, TCA_ROOT), not by an "
           "MPI launcher";
  if (!chosen.empty() && chosen != "auto")
    return "TCA_BOOTSTRAP=" + chosen + " starts the ranks without MPI";
  if (has_env("OMPI_COMM_WORLD_SIZE") || has_env("PMI_SIZE") || has_env("MV2_COMM_WORLD_SIZE") ||
      (has_env("PMIX_RANK") && has_open_mpi_launch_variable()))
    return "";
  return "not started by an MPI launcher (mpirun)";
}

int launch_rank() {
  for (const char* name : {"TCA_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                           "MV2_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    const long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0 && rank <= INT_MAX) return static_cast<int>(rank);
  }
  return 0;
}

std::string start_reference_mpi(int* argc, char*** argv) {
#ifdef TCA_HARNESS_MPI
  std::string missing = mpi_launch_missing();
  if (!missing.empty()) return missing;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    die("MPI_Init_thread failed");
  started_mpi = true;
  return "";
#else
  (void)argc;
  (void)argv;
  return "this build has no MPI";
#endif
}

bool reference_mpi_running() { return started_mpi; }

void finish_reference_mpi() {
#ifdef TCA_HARNESS_MPI
  if (started_mpi) MPI_Finalize();
  started_mpi = false;
#endif
}

}  // namespace tca_harness
