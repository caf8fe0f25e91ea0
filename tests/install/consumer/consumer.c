// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* A C program that uses an installed tca: each rank puts a value into the next rank's buffer
 * (a ring), notifies it and checks what its own neighbour sent. With TCA_CONSUMER_MPI it also
 * asks MPI for the size of the job (the CMake consumer links MPI::MPI_C through tca's package). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca.h>
#ifdef TCA_CONSUMER_MPI
#include <mpi.h>
#endif

#define CHECK(call)                                                                      \
  do {                                                                                   \
    tcaResult result_ = (call);                                                          \
    if (result_ != TCA_SUCCESS) {                                                        \
      fprintf(stderr, "consumer (C): %s failed: %s\n", #call, tcaGetLastErrorMessage()); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
#ifdef TCA_CONSUMER_MPI
  int mpi_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  if (mpi_size != size) {
    fprintf(stderr, "consumer (C): MPI says %d ranks, tca %d\n", mpi_size, size);
    return 1;
  }
#endif
  uint64_t* buffer = NULL;
  CHECK(tcaMalloc((void**)&buffer, sizeof *buffer, TCA_MEM_CPU));
  *buffer = 0;
  tcaHandle mine;
  CHECK(tcaCreateHandle(&mine, buffer, sizeof *buffer, TCA_MEM_CPU));
  tcaHandle* all = malloc(sizeof *all * (size_t)size);
  if (!all) return 1;
  CHECK(tcaAllgatherHandles(&mine, all));
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  const uint64_t value = 1000u + (uint64_t)rank;
  CHECK(tcaPut(&all[next], 0, &value, sizeof value));
  CHECK(tcaNotify(next, 0));
  CHECK(tcaWaitDMARecvDesc(previous, 0, NULL));
  const int right = *buffer == 1000u + (uint64_t)previous;
  if (right)
    printf("consumer (C): rank %d of %d: ok\n", rank, size);
  else
    fprintf(stderr, "consumer (C): rank %d received %llu\n", rank, (unsigned long long)*buffer);
  CHECK(tcaBarrier());
  CHECK(tcaDestroyHandle(&mine));
  CHECK(tcaFree(buffer));
  free(all);
  CHECK(tcaFinalize());
  return right ? 0 : 1;
}
