// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The control exchanges over an MPI communicator, for MPI programs (TCA_HARNESS_MPI).
#include <climits>

#include "tca_harness/check.h"
#include "tca_harness/ranks.h"

namespace tca_harness {
namespace {

int mpi_count(size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX))
    die("a control exchange of " + std::to_string(bytes) + " bytes exceeds MPI's int count");
  return static_cast<int>(bytes);
}

}  // namespace

Control mpi_control(MPI_Comm comm) {
  Control control;
  MPI_Comm_rank(comm, &control.rank);
  MPI_Comm_size(comm, &control.size);
  control.allgather = [comm](const void* mine, void* all, size_t bytes) {
    MPI_Allgather(mine, mpi_count(bytes), MPI_BYTE, all, mpi_count(bytes), MPI_BYTE, comm);
  };
  control.broadcast = [comm](void* data, size_t bytes, int root) {
    MPI_Bcast(data, mpi_count(bytes), MPI_BYTE, root, comm);
  };
  return control;
}

bool all_ranks(bool mine, MPI_Comm comm) {
  int local = mine ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_LAND, comm);
  return all != 0;
}

std::string agreed_reason(const std::string& reason, MPI_Comm comm, const std::string& elsewhere) {
  if (all_ranks(reason.empty(), comm)) return "";
  return reason.empty() ? elsewhere : reason;
}

}  // namespace tca_harness
