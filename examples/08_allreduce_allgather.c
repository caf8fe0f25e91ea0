// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* Collectives in one call (tca_coll.h): allreduce and allgather on host memory, as MPI has them.
 * The first call of a shape sets it up (registration, scratch, chains) and keeps it; later calls
 * of that shape pay only the transfers. Run: mpirun -n 4 ./tca_example_allreduce_allgather. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca.h>
#include <tca/tca_coll.h>

static void check(tcaResult result, const char* call, int line) {
  if (result == TCA_SUCCESS) return;
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, call, tcaGetLastErrorMessage());
  exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

enum { COUNT = 1000, PER_RANK = 100 };

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));

  /* Allreduce, sum of doubles: every rank ends with the element-wise sum over ranks. Any host
   * memory will do; NULL as the configuration: the algorithm is chosen by size and ranks. */
  double* send = malloc(COUNT * sizeof(double));
  double* sum = malloc(COUNT * sizeof(double));
  if (send == NULL || sum == NULL) return 1;
  for (int i = 0; i < COUNT; ++i) send[i] = rank + 0.5 * i;
  CHECK(tcaAllreduce(send, sum, COUNT, TCA_DOUBLE, TCA_SUM, NULL));
  for (int i = 0; i < COUNT; ++i) wrong |= sum[i] != size * (size - 1) / 2 + size * 0.5 * i;

  /* In place (sendbuf == recvbuf), maximum of 32-bit integers. */
  int32_t highest[2] = {rank, -rank};
  CHECK(tcaAllreduce(highest, highest, 2, TCA_INT32, TCA_MAX, NULL));
  wrong |= highest[0] != size - 1 || highest[1] != 0;

  /* Allgather: PER_RANK elements from every rank, rank r's at element r * PER_RANK. */
  int64_t mine[PER_RANK];
  int64_t* gathered = malloc((size_t)size * PER_RANK * sizeof(int64_t));
  if (gathered == NULL) return 1;
  for (int i = 0; i < PER_RANK; ++i) mine[i] = (int64_t)rank * 1000 + i;
  CHECK(tcaAllgather(mine, gathered, PER_RANK, TCA_INT64, NULL));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < PER_RANK; ++i) wrong |= gathered[r * PER_RANK + i] != (int64_t)r * 1000 + i;

  /* Which algorithm the automatic choice takes for a size (a local question). */
  tcaCollAlgorithm algorithm;
  CHECK(tcaCollChooseAlgorithm(TCA_COLL_ALLREDUCE, TCA_MEM_CPU, COUNT * sizeof(double), size,
                               &algorithm));
  if (rank == 0)
    printf("allreduce of %zu bytes on %d ranks: %s\n", COUNT * sizeof(double), size,
           tcaCollAlgorithmName(algorithm));

  CHECK(tcaCollReleaseCache()); /* collective: frees what the one-shot calls kept */
  free(send);
  free(sum);
  free(gathered);
  CHECK(tcaFinalize());
  if (wrong)
    fprintf(stderr, "rank %d: wrong collective result\n", rank);
  else
    printf("rank %d of %d: allreduce and allgather ok\n", rank, size);
  return wrong ? 1 : 0;
}
