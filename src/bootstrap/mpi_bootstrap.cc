// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "bootstrap/bootstrap.h"

namespace tca {
namespace {

class MpiBootstrap final : public Bootstrap {
 public:
  MpiBootstrap(MPI_Comm comm, bool owns_mpi) : comm_(comm), owns_mpi_(owns_mpi) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  MpiBootstrap(const MpiBootstrap&) = delete;
  MpiBootstrap& operator=(const MpiBootstrap&) = delete;
  ~MpiBootstrap() override {
    // A dead rank would hold MPI's finalize (and a thread left inside MPI forbids any call).
    if (mpi_guard().abandoned() || mpi_guard().peer_failed()) {
      TCA_WARN("a rank died during the job: MPI is left as it is, not finalized");
      return;
    }
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "mpi"; }
  bool is_mpi() const override { return true; }
  tcaResult start_guard(CallGuard::Liveness liveness) override;
  void stop_guard() override { mpi_guard().stop(); }

  tcaResult allgather(const void* mine, void* all, size_t bytes) override {
    if (bytes > static_cast<size_t>(INT32_MAX))
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "bootstrap allgather of {} bytes is too large", bytes);
    const int count = static_cast<int>(bytes);
    return mpi_guard().run(nullptr, "the bootstrap's MPI_Allgather", [&]() -> tcaResult {
      if (MPI_Allgather(mine, count, MPI_BYTE, all, count, MPI_BYTE, comm_) != MPI_SUCCESS)
        TCA_FAIL(TCA_ERROR_TRANSPORT, "MPI_Allgather failed in bootstrap");
      return TCA_SUCCESS;
    });
  }

  tcaResult broadcast(void* data, size_t bytes, int root) override {
    if (bytes > static_cast<size_t>(INT32_MAX))
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "bootstrap broadcast of {} bytes is too large", bytes);
    return mpi_guard().run(nullptr, "the bootstrap's MPI_Bcast", [&]() -> tcaResult {
      if (MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_) != MPI_SUCCESS)
        TCA_FAIL(TCA_ERROR_TRANSPORT, "MPI_Bcast failed in bootstrap");
      return TCA_SUCCESS;
    });
  }

  tcaResult barrier() override {
    return mpi_guard().run(nullptr, "the bootstrap's MPI_Barrier", [&]() -> tcaResult {
      if (MPI_Barrier(comm_) != MPI_SUCCESS) TCA_FAIL(TCA_ERROR_TRANSPORT, "MPI_Barrier failed");
      return TCA_SUCCESS;
    });
  }

 private:
  MPI_Comm comm_;
  bool owns_mpi_;
  int rank_ = 0;
  int size_ = 1;
};

// Whether the launcher lets survivors of a dead rank run on (Open MPI's mpirun
// --enable-recovery passes that on to its ranks).
bool launcher_keeps_survivors() {
  const char* recovery = std::getenv("OMPI_MCA_orte_enable_recovery");
  return recovery != nullptr &&
         (std::strcmp(recovery, "1") == 0 || std::strcmp(recovery, "true") == 0);
}

}  // namespace

CallGuard& mpi_guard() {
  static CallGuard* guard = new CallGuard();  // outlives any thread left inside MPI
  return *guard;
}

bool mpi_in_use() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

// Starts the guard where TCA_MPI_GUARD asks (auto: under mpirun --enable-recovery) and MPI
// allows calls from another thread.
tcaResult MpiBootstrap::start_guard(CallGuard::Liveness liveness) {
  const int size = size_;
  const int rank = rank_;
  std::string mode;
  TCA_CHECK(setting_choice("TCA_MPI_GUARD", &mode));
  if (mode == "off" || (mode == "auto" && !launcher_keeps_survivors())) return TCA_SUCCESS;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    if (mode == "on")
      TCA_FAIL(TCA_ERROR_UNSUPPORTED,
               "TCA_MPI_GUARD=on makes MPI calls from a thread of its "
               "own, but MPI was initialized with thread level {} (at least "
               "MPI_THREAD_SERIALIZED is needed: MPI_Init_thread)",
               provided);
    TCA_WARN(
        "MPI thread level {} is below MPI_THREAD_SERIALIZED: MPI calls are not guarded "
        "against a rank dying during them",
        provided);
    return TCA_SUCCESS;
  }
  std::vector<int> others;
  for (int other = 0; other < size; ++other)
    if (other != rank) others.push_back(other);
  TCA_CHECK(mpi_guard().start(std::move(liveness), std::move(others)));
  TCA_INFO("MPI calls that involve other ranks run on a guard thread (TCA_MPI_GUARD={})", mode);
  return TCA_SUCCESS;
}

tcaResult make_mpi_bootstrap(std::unique_ptr<Bootstrap>* out) {
  if (mpi_guard().abandoned())
    TCA_FAIL(TCA_ERROR_PEER_FAILED,
             "an earlier job of this process left a thread inside MPI "
             "when a rank died: MPI cannot be used again in this process");
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    TCA_FAIL(TCA_ERROR_NOT_INITIALIZED,
             "MPI was finalized (by tcaFinalize, when tca started MPI, "
             "or by the program): MPI cannot start again in this process, so neither can tca");
  int initialized = 0;
  MPI_Initialized(&initialized);
  bool owns_mpi = false;
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "MPI_Init_thread failed");
    owns_mpi = true;
  }
  MPI_Comm comm;
  if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
    TCA_FAIL(TCA_ERROR_TRANSPORT, "MPI_Comm_dup failed in bootstrap");
  // Failures come back as codes: the library never lets MPI abort the program.
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  *out = std::make_unique<MpiBootstrap>(comm, owns_mpi);
  return TCA_SUCCESS;
}

}  // namespace tca
