// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// main() of tca_bfs_tests, alone, under tca-run or under mpirun: the control layer (MPI where an
// MPI launcher started it, else tca's bootstrap) and tca live for the whole program; rank 0
// prints gtest's report, the other ranks their failures only; every rank exits non-zero when
// any rank failed.
#include <gtest/gtest.h>
#include <tca/tca.h>

#include <cstdio>
#include <string>

#include "control.h"

namespace {

class FailuresOnly : public ::testing::EmptyTestEventListener {
 public:
  explicit FailuresOnly(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_,
                   result.file_name() ? result.file_name() : "?", result.line_number(),
                   result.message());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string failure = tca_apps::start_control(&argc, &argv);
  if (!failure.empty()) {
    std::fprintf(stderr, "%s\n", failure.c_str());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int rank = tca_apps::rank(), size = tca_apps::size();
  const bool start_tca = !tca_apps::tca_started_by_control();
  if (start_tca && tcaInit() != TCA_SUCCESS) {
    std::fprintf(stderr, "tcaInit: %s\n", tcaGetLastErrorMessage());
    tca_apps::finish_control();
    return 1;
  }
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailuresOnly(rank));
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  const int failed_ranks = tca_apps::allreduce<int32_t>(failed, tca_apps::Op::kSum);
  if (rank == 0 && failed_ranks > 0)
    std::fprintf(stderr, "FAILED on %d of %d ranks\n", failed_ranks, size);
  if (start_tca) tcaFinalize();
  tca_apps::finish_control();
  return failed_ranks > 0 ? 1 : 0;
}
