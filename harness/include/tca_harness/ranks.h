// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Control between the ranks of a job: agreement, broadcasts, gathering. The functions without a
// communicator go through tca itself (tcaBootstrapAllgather / tcaBootstrapBroadcast /
// tcaBarrier, over whatever started the job: MPI, PMIx, tca-run's sockets), so a program built
// on them needs no MPI; they are valid between tcaInit and tcaFinalize, and a failure ends the
// job (die). Where the harness has MPI (TCA_HARNESS_MPI), the forms taking an MPI_Comm remain for
// MPI programs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#ifdef TCA_HARNESS_MPI
#include <mpi.h>
#endif

namespace tca_harness {

// The ranks a control exchange runs over and how it runs there: tca's bootstrap (tca_control)
// or, in MPI programs, a communicator (mpi_control).
struct Control {
  int rank = 0;
  int size = 1;
  // all[r*bytes .. (r+1)*bytes) receives rank r's `mine` (collective).
  std::function<void(const void* mine, void* all, size_t bytes)> allgather;
  // `data` of rank `root` to every rank (collective).
  std::function<void(void* data, size_t bytes, int root)> broadcast;
};

// tca's bootstrap; tcaInit must have succeeded.
Control tca_control();

// This rank and the number of ranks, as tca sees them.
int job_rank();
int job_size();
// tcaBarrier: for set-up and agreement, not for ordering data.
void barrier();

// Whether `mine` holds on every rank (collective).
bool all_ranks(bool mine, const Control& control);
bool all_ranks(bool mine);

// Collective: "" where every rank's `reason` is "", else this rank's reason, or `elsewhere`
// where only other ranks have one. For "can this run here?" questions answered per rank.
std::string agreed_reason(const std::string& reason, const Control& control,
                          const std::string& elsewhere);
std::string agreed_reason(const std::string& reason, const std::string& elsewhere);

// Every rank's `mine`, of any length, in rank order (collective).
std::vector<std::vector<uint8_t>> allgather_bytes(const std::vector<uint8_t>& mine,
                                                  const Control& control);

// Every rank's value of a plain type, in rank order (collective, over tca).
template <typename T>
std::vector<T> allgather_value(const T& mine) {
  static_assert(std::is_trivially_copyable_v<T>, "plain values only");
  const Control control = tca_control();
  std::vector<T> all(static_cast<size_t>(control.size));
  control.allgather(&mine, all.data(), sizeof(T));
  return all;
}

// Rank `root`'s value on every rank (collective, over tca).
template <typename T>
T broadcast_value(T value, int root) {
  static_assert(std::is_trivially_copyable_v<T>, "plain values only");
  tca_control().broadcast(&value, sizeof(T), root);
  return value;
}

// The largest and the sum of every rank's value (collective, over tca).
double max_over_ranks(double mine);
uint64_t sum_over_ranks(uint64_t mine);

#ifdef TCA_HARNESS_MPI
// The same exchanges over an MPI communicator (MPI programs: MPI must be initialized).
Control mpi_control(MPI_Comm comm);
bool all_ranks(bool mine, MPI_Comm comm);
std::string agreed_reason(const std::string& reason, MPI_Comm comm, const std::string& elsewhere);
#endif

}  // namespace tca_harness
