// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Agreement among the ranks of a communicator.
#pragma once

#include <mpi.h>

#include <string>

namespace tca_harness {

// Whether `mine` holds on every rank of `comm` (collective).
bool all_ranks(bool mine, MPI_Comm comm);

// Collective: "" where every rank's `reason` is "", else this rank's reason, or `elsewhere`
// where only other ranks have one. For "can this run here?" questions answered per rank.
std::string agreed_reason(const std::string& reason, MPI_Comm comm, const std::string& elsewhere);

}  // namespace tca_harness
