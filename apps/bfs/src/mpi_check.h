// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// --comm mpi's exchanges (builds with MPI): an MPI call's failure as an Error naming the call.
#pragma once
#ifdef TCA_HARNESS_MPI
#include <mpi.h>

#include <string>

#include "common.h"

namespace bfs {

inline void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, length));
}

}  // namespace bfs
#endif
