#include <mpi.h>

#include "bootstrap/bootstrap.h"
#include "core/error.h"

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
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  tcaResult allgather(const void* mine, void* all, size_t bytes) override {
    if (bytes > static_cast<size_t>(INT32_MAX))
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "bootstrap allgather of {} bytes is too large", bytes);
    const int count = static_cast<int>(bytes);
    if (MPI_Allgather(mine, count, MPI_BYTE, all, count, MPI_BYTE, comm_) != MPI_SUCCESS)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "MPI_Allgather failed in bootstrap");
    return TCA_SUCCESS;
  }

  tcaResult broadcast(void* data, size_t bytes, int root) override {
    if (bytes > static_cast<size_t>(INT32_MAX))
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "bootstrap broadcast of {} bytes is too large", bytes);
    if (MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_) != MPI_SUCCESS)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "MPI_Bcast failed in bootstrap");
    return TCA_SUCCESS;
  }

  tcaResult barrier() override {
    if (MPI_Barrier(comm_) != MPI_SUCCESS) TCA_FAIL(TCA_ERROR_TRANSPORT, "MPI_Barrier failed");
    return TCA_SUCCESS;
  }

 private:
  MPI_Comm comm_;
  bool owns_mpi_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

tcaResult make_mpi_bootstrap(std::unique_ptr<Bootstrap>* out) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    TCA_FAIL(TCA_ERROR_NOT_INITIALIZED, "MPI was finalized (by tcaFinalize, when tca started MPI, "
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
