// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A C++ program that uses an installed tca: each rank puts a value into the next rank's buffer
// (a ring), notifies it and checks what its own neighbour sent. With TCA_CONSUMER_MPI it also
// asks MPI for the size of the job (the CMake consumer links MPI::MPI_CXX through tca's package).
#include <tca/tca.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>
#ifdef TCA_CONSUMER_MPI
#include <mpi.h>
#endif

namespace {

void check(tcaResult result, const char* call) {
  if (result != TCA_SUCCESS)
    throw std::runtime_error(std::string(call) + ": " + tcaGetLastErrorMessage());
}

int ring() {
  check(tcaInit(), "tcaInit");
  int rank = 0, size = 0;
  check(tcaRank(&rank), "tcaRank");
  check(tcaSize(&size), "tcaSize");
#ifdef TCA_CONSUMER_MPI
  int mpi_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  if (mpi_size != size) throw std::runtime_error("MPI and tca disagree on the ranks");
#endif
  void* memory = nullptr;
  check(tcaMalloc(&memory, sizeof(std::uint64_t), TCA_MEM_CPU), "tcaMalloc");
  auto* buffer = static_cast<std::uint64_t*>(memory);
  *buffer = 0;
  tcaHandle mine{};
  check(tcaCreateHandle(&mine, buffer, sizeof *buffer, TCA_MEM_CPU), "tcaCreateHandle");
  std::vector<tcaHandle> all(static_cast<size_t>(size));
  check(tcaAllgatherHandles(&mine, all.data()), "tcaAllgatherHandles");
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  const std::uint64_t value = 2000u + static_cast<std::uint64_t>(rank);
  check(tcaPut(&all[static_cast<size_t>(next)], 0, &value, sizeof value), "tcaPut");
  check(tcaNotify(next, 0), "tcaNotify");
  check(tcaWaitDMARecvDesc(previous, 0, nullptr), "tcaWaitDMARecvDesc");
  const bool right = *buffer == 2000u + static_cast<std::uint64_t>(previous);
  if (right)
    std::printf("consumer (C++): rank %d of %d: ok\n", rank, size);
  else
    std::fprintf(stderr, "consumer (C++): rank %d received %llu\n", rank,
                 static_cast<unsigned long long>(*buffer));
  check(tcaBarrier(), "tcaBarrier");
  check(tcaDestroyHandle(&mine), "tcaDestroyHandle");
  check(tcaFree(memory), "tcaFree");
  check(tcaFinalize(), "tcaFinalize");
  return right ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return ring();
  } catch (const std::exception& failure) {
    std::fprintf(stderr, "consumer (C++): %s\n", failure.what());
    return 1;
  }
}
