// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca_bootstrap_probe: one rank of a job started however the environment says. It initializes
// tca, checks an allgather and a broadcast over the bootstrap and a barrier, finalizes, and does
// that `--loops N` times (init again). With `--shrink K`, the ranks >= K leave after the first
// round and the others start again as a job of K ranks (TCA_SIZE changed in their environment).
// Prints one line per rank ("ok rank R of S bootstrap NAME loops N", or "error CODE NAME:
// MESSAGE") and exits 0, or 10 + the tcaResult of the first failure.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tca/tca.h"

namespace {

int fail(tcaResult result, const char* where) {
  std::printf("error %d %s: %s (%s)\n", static_cast<int>(result), tcaGetErrorString(result),
              tcaGetLastErrorMessage(), where);
  std::fflush(stdout);
  return 10 + static_cast<int>(result);
}

#define PROBE(call)                         \
  do {                                      \
    const tcaResult probe_result_ = (call); \
    if (probe_result_ != TCA_SUCCESS) {     \
      *status = fail(probe_result_, #call); \
      return false;                         \
    }                                       \
  } while (0)

// One job: init, exchanges checked, finalize.
bool one_round(int round, int* rank, int* size, const char** name, int* status) {
  PROBE(tcaInit());
  PROBE(tcaRank(rank));
  PROBE(tcaSize(size));
  PROBE(tcaBootstrapInfo(name, nullptr));
  const int mine = *rank * 1000 + round;
  std::vector<int> all(static_cast<size_t>(*size), -1);
  PROBE(tcaBootstrapAllgather(&mine, all.data(), sizeof mine));
  for (int r = 0; r < *size; ++r)
    if (all[static_cast<size_t>(r)] != r * 1000 + round) {
      *status = fail(TCA_ERROR_INTERNAL, "allgather delivered a wrong value");
      return false;
    }
  int from_last = *rank == *size - 1 ? round + 7 : -1;
  PROBE(tcaBootstrapBroadcast(&from_last, sizeof from_last, *size - 1));
  if (from_last != round + 7) {
    *status = fail(TCA_ERROR_INTERNAL, "broadcast delivered a wrong value");
    return false;
  }
  PROBE(tcaBarrier());
  static std::string kept;
  kept = *name;  // lives past tcaFinalize
  *name = kept.c_str();
  PROBE(tcaFinalize());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int loops = 1;
  int shrink = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--loops") == 0) loops = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--shrink") == 0) shrink = std::atoi(argv[i + 1]);
  }
  int rank = -1, size = 0, status = 0;
  const char* name = "?";
  for (int round = 0; round < loops; ++round) {
    if (!one_round(round, &rank, &size, &name, &status)) return status;
    if (shrink > 0 && round == 0) {
      if (rank >= shrink) {
        std::printf("ok rank %d of %d bootstrap %s left\n", rank, size, name);
        return 0;
      }
      setenv("TCA_SIZE", std::to_string(shrink).c_str(), 1);
    }
  }
  std::printf("ok rank %d of %d bootstrap %s loops %d\n", rank, size, name, loops);
  return 0;
}
