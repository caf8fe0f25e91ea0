// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// main() of tca_bfs_tests, alone or under mpirun: MPI and tca live for the whole program; rank 0
// prints gtest's report, the other ranks their failures only; every rank exits non-zero when
// any rank failed.
#include <gtest/gtest.h>
#include <mpi.h>
#include <tca/tca.h>

#include <cstdio>

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
  // SERIALIZED: tca may make MPI calls from its guard thread (TCA_MPI_GUARD).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (tcaInit() != TCA_SUCCESS) {
    std::fprintf(stderr, "tcaInit: %s\n", tcaGetLastErrorMessage());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailuresOnly(rank));
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int failed_ranks = 0;
  MPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && failed_ranks > 0)
    std::fprintf(stderr, "FAILED on %d of %d ranks\n", failed_ranks, size);
  tcaFinalize();
  MPI_Finalize();
  return failed_ranks > 0 ? 1 : 0;
}
