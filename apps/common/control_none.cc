// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Builds without MPI: the MPI backend is absent, and start_control never picks it.
#include "control_mpi.h"
#include "tca_harness/check.h"

namespace tca_apps::mpi_backend {

void absent() { tca_harness::die("the applications' MPI backend is not in this build"); }

}  // namespace tca_apps::mpi_backend
