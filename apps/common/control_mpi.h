// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The control layer's MPI backend (control_mpi.cc, in builds with MPI): the MPI calls MPI
// programs make, over MPI_COMM_WORLD. Builds without MPI never choose this backend.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "control.h"

namespace tca_apps::mpi_backend {

#ifdef TCA_HARNESS_MPI
void start(int* argc, char*** argv, int* rank, int* size);
void finish();
int local_rank();
int ranks_on_host();
void barrier();
void broadcast(void* data, size_t bytes, int root);
void allgather(const void* mine, void* all, size_t bytes);
void allgather_in_place(void* all, size_t bytes);
void allreduce(const void* in, void* out, size_t count, Type type, Op op);
void allgatherv(const void* mine, size_t bytes, void* all, const std::vector<uint64_t>& lengths,
                const std::vector<size_t>& displs);
void alltoallv(const void* send, const size_t* send_counts, const size_t* send_displs, void* recv,
               const size_t* recv_counts, const size_t* recv_displs, size_t elem_bytes);
#else
// Never reached: start_control picks this backend only where the build has MPI.
[[noreturn]] void absent();
inline void finish() { absent(); }
inline int local_rank() { absent(); }
inline int ranks_on_host() { absent(); }
inline void barrier() { absent(); }
inline void broadcast(void*, size_t, int) { absent(); }
inline void allgather(const void*, void*, size_t) { absent(); }
inline void allgather_in_place(void*, size_t) { absent(); }
inline void allreduce(const void*, void*, size_t, Type, Op) { absent(); }
inline void allgatherv(const void*, size_t, void*, const std::vector<uint64_t>&,
                       const std::vector<size_t>&) {
  absent();
}
inline void alltoallv(const void*, const size_t*, const size_t*, void*, const size_t*,
                      const size_t*, size_t) {
  absent();
}
#endif

}  // namespace tca_apps::mpi_backend
