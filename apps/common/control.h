// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Control between the ranks of an application (set-up, agreement, graph construction,
// validation, timings), with two backends chosen at start: MPI where an MPI launcher started the
// job or TCA_BOOTSTRAP=mpi asks for it (and this build has MPI), with the same MPI calls and so
// the same results as an MPI program; else tca's bootstrap (tca-run, torchrun, PMIx, the
// environment): tcaInit at start, every exchange through tcaBootstrapAllgather /
// tcaBootstrapBroadcast, reductions in rank order so every rank gets the same bits. Control over
// tca's bootstrap is for set-up sizes, not for bulk data at scale. All calls are collective over
// every rank of the job, between start_control and finish_control; a failure ends the job (die).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tca_harness/ranks.h"

namespace tca_apps {

enum class Backend { kMpi, kTca };
enum class Op { kSum, kMax, kMin, kAnd, kOr, kBitOr };  // kBitOr: integers only
enum class Type { kInt32, kUint32, kInt64, kUint64, kDouble, kUint8 };

template <typename T>
constexpr Type type_of() {
  if constexpr (std::is_same_v<T, double>)
    return Type::kDouble;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 1)
    return Type::kUint8;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 4)
    return Type::kInt32;
  else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T> && sizeof(T) == 4)
    return Type::kUint32;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 8)
    return Type::kInt64;
  else {
    static_assert(std::is_integral_v<T> && std::is_unsigned_v<T> && sizeof(T) == 8,
                  "control reductions take 32- and 64-bit integers, double or bytes");
    return Type::kUint64;
  }
}

// First in main: picks the backend; MPI: MPI_Init_thread (SERIALIZED: tca may call MPI from its
// guard thread); tca: tcaInit. Returns "" or why the job cannot start.
std::string start_control(int* argc, char*** argv);
// Last in main: MPI_Finalize or tcaFinalize, whichever start_control did.
void finish_control();
Backend control_backend();
// "" where the MPI backend runs (MPI communication can be offered), else why not.
std::string mpi_unavailable();
// Whether tcaInit already ran (tca backend): programs then must not call tcaInit themselves.
bool tca_started_by_control();

int rank();
int size();
// This rank's place among the ranks of its host and their number: MPI's shared-memory split, or
// under tca (before or after tcaInit) the launcher's environment: LOCAL_RANK / LOCAL_WORLD_SIZE
// (torchrun), TCA_HOST_ID=block:K (tca-run --hosts-per), TCA_RANK / TCA_SIZE (tca-run), else 0/1.
int local_rank();
int ranks_on_host();

void barrier();
void broadcast(void* data, size_t bytes, int root);
// all[r*bytes .. (r+1)*bytes) receives rank r's `mine`.
void allgather(const void* mine, void* all, size_t bytes);
// The same with this rank's part already in place at all[rank*bytes ..).
void allgather_in_place(void* all, size_t bytes);
// `in` may equal `out` (in place).
void allreduce(const void* in, void* out, size_t count, Type type, Op op);
// Every rank's `mine`, of any length, in rank order, concatenated into `all`; `counts` (may be
// null) receives each rank's length. In bytes.
void allgatherv(const void* mine, size_t bytes, std::vector<uint8_t>* all,
                std::vector<size_t>* counts);
// Element counts and displacements per rank (elements of `elem_bytes`), as MPI_Alltoallv.
void alltoallv(const void* send, const size_t* send_counts, const size_t* send_displs, void* recv,
               const size_t* recv_counts, const size_t* recv_displs, size_t elem_bytes);

// The layer as the harness's Control (e.g. for tca_harness::Nccl::open).
tca_harness::Control harness_control();

template <typename T>
void allreduce(const T* in, T* out, size_t count, Op op) {
  allreduce(in, out, count, type_of<T>(), op);
}
template <typename T>
T allreduce(T value, Op op) {
  T out{};
  allreduce(&value, &out, 1, type_of<T>(), op);
  return out;
}
template <typename T>
void allreduce_in_place(T* data, size_t count, Op op) {
  allreduce(data, data, count, type_of<T>(), op);
}
template <typename T>
std::vector<T> allgather_value(const T& mine) {
  static_assert(std::is_trivially_copyable_v<T>, "plain values only");
  std::vector<T> all(static_cast<size_t>(size()));
  allgather(&mine, all.data(), sizeof(T));
  return all;
}

}  // namespace tca_apps
