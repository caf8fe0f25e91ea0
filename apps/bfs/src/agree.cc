// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "agree.h"

#include <vector>

namespace bfs {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, length));
}

std::string first_message(MPI_Comm comm, const std::string& text) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = text.empty() ? size : rank;
  int first = size;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size) return std::string();
  int length = rank == first ? static_cast<int>(text.size()) : 0;
  check_mpi(MPI_Bcast(&length, 1, MPI_INT, first, comm), "MPI_Bcast");
  std::vector<char> bytes(text.begin(), text.end());
  bytes.resize(length);
  check_mpi(MPI_Bcast(bytes.data(), length, MPI_CHAR, first, comm), "MPI_Bcast");
  return std::string(bytes.begin(), bytes.end());
}

void agree(MPI_Comm comm, const std::string& failure) {
  const std::string first = first_message(comm, failure);
  if (!first.empty()) throw AgreedError(first);
}

}  // namespace bfs
