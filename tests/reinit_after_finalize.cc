// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tcaInit after a tcaFinalize that ended MPI (tca started MPI itself, so it finalized it): MPI
// cannot start again in the process, and tca must say so instead of letting MPI abort it.
// Exits 0 when the second tcaInit fails cleanly with TCA_ERROR_NOT_INITIALIZED.
#include <cstdio>
#include <cstring>

#include "tca/tca.h"

int main() {
  if (tcaInit() != TCA_SUCCESS || tcaFinalize() != TCA_SUCCESS) {
    std::fprintf(stderr, "first cycle failed: %s\n", tcaGetLastErrorMessage());
    return 1;
  }
  const tcaResult again = tcaInit();
  const char* message = tcaGetLastErrorMessage();
  std::printf("second tcaInit: %s: %s\n", tcaGetErrorString(again), message);
  int rank = 0;
  const bool refused = again == TCA_ERROR_NOT_INITIALIZED && std::strlen(message) > 0 &&
                       tcaRank(&rank) == TCA_ERROR_NOT_INITIALIZED;
  return refused ? 0 : 1;
}
