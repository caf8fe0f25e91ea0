// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/ranks.h"

namespace tca_harness {

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
