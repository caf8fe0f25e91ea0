// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// NCCL loaded at run time (dlopen of libnccl.so.2), for reference rows and applications that
// compare against NCCL. Built where CUDA and nccl.h are (TCA_HARNESS_NCCL is then defined);
// a machine without the library still runs the program: open() says why NCCL cannot be used.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "tca_harness/ranks.h"

namespace tca_harness {

class Nccl {
 public:
  Nccl() = default;
  Nccl(const Nccl&) = delete;
  Nccl& operator=(const Nccl&) = delete;
  ~Nccl();  // destroys the communicator, unloads the library

  // Collective over the ranks of `control`: loads `library` on every rank and makes one
  // communicator over all of them (ncclCommInitRank; this rank's GPU is the current CUDA
  // device; the unique id travels through `control`). Returns why NCCL cannot be used, the
  // same on every rank, or "" when it is ready. NCCL refusing the job (two ranks on one GPU,
  // ...) is such a reason, not a failure. Decided once: later calls return the same answer.
  std::string open(const Control& control, const std::string& library = "libnccl.so.2");
  // Over every rank of the job, through tca's bootstrap (after tcaInit).
  std::string open() { return open(tca_control()); }
#ifdef TCA_HARNESS_MPI
  // Over the ranks of an MPI communicator (MPI programs).
  std::string open(MPI_Comm comm, const std::string& library = "libnccl.so.2") {
    return open(mpi_control(comm), library);
  }
#endif
  bool ready() const { return comm_ != nullptr; }
  ncclComm_t comm() const { return comm_; }
  std::string version() const;  // "2.28.9"
  const char* error_string(ncclResult_t result) const;

  // die("<call>: <NCCL's message>") unless result is ncclSuccess.
  void check(ncclResult_t result, const char* call) const;

  // The library's calls on this communicator, enqueued on `stream` (ncclInvalidUsage before
  // open() succeeded).
  ncclResult_t all_reduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                          ncclRedOp_t op, cudaStream_t stream) const;
  ncclResult_t all_gather(const void* send, void* recv, size_t count_per_rank, ncclDataType_t type,
                          cudaStream_t stream) const;
  ncclResult_t reduce_scatter(const void* send, void* recv, size_t count_per_rank,
                              ncclDataType_t type, ncclRedOp_t op, cudaStream_t stream) const;
  ncclResult_t broadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                         cudaStream_t stream) const;
  ncclResult_t send(const void* data, size_t count, ncclDataType_t type, int peer,
                    cudaStream_t stream) const;
  ncclResult_t recv(void* data, size_t count, ncclDataType_t type, int peer,
                    cudaStream_t stream) const;
  ncclResult_t group_start() const;
  ncclResult_t group_end() const;

 private:
  struct Api;
  std::string load(const std::string& library);
  std::string connect(const Control& control);

  void* library_ = nullptr;
  const Api* api_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::string failure_;  // why open() failed, once it has
};

}  // namespace tca_harness
