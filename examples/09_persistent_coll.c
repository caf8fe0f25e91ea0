// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* Persistent collectives: made once for a size and a pair of buffers (tcaCollNew registers them,
 * allocates scratch and builds every step's chain), then started many times. An iteration pays
 * only kicks, waits and local reductions, and can overlap other work (tcaCollTest).
 * Run: mpirun -n 3 ./tca_example_persistent_coll (any number of ranks). */
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

enum { COUNT = 4096, ITERATIONS = 50 };

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));

  /* Buffers from tcaMalloc: same-host peers map them, so each step is a single copy. */
  double *send = NULL, *sum = NULL, *all = NULL;
  CHECK(tcaMalloc((void**)&send, COUNT * sizeof(double), TCA_MEM_CPU));
  CHECK(tcaMalloc((void**)&sum, COUNT * sizeof(double), TCA_MEM_CPU));
  CHECK(tcaMalloc((void**)&all, (size_t)size * sizeof(double), TCA_MEM_CPU));

  /* An allreduce with the automatic algorithm, and an in-place allgather (each rank's element
   * already at its place in `all`) on the ring, chosen through the configuration. */
  tcaColl allreduce, allgather;
  CHECK(tcaCollNew(&allreduce, TCA_COLL_ALLREDUCE, TCA_DOUBLE, TCA_SUM, COUNT, send, sum, NULL));
  tcaCollConfig config = {0}; /* all zero: the defaults */
  config.algorithm = TCA_COLL_RING;
  CHECK(
      tcaCollNew(&allgather, TCA_COLL_ALLGATHER, TCA_DOUBLE, TCA_SUM, 1, all + rank, all, &config));
  tcaCollAlgorithm algorithm;
  CHECK(tcaCollGetAlgorithm(allreduce, &algorithm));
  if (rank == 0)
    printf("allreduce of %d doubles runs %s\n", COUNT, tcaCollAlgorithmName(algorithm));

  for (int it = 0; it < ITERATIONS; ++it) {
    for (int i = 0; i < COUNT; ++i) send[i] = rank * it + i; /* this iteration's data */
    CHECK(tcaCollStart(allreduce));
    /* Other work could run here, with tcaCollTest now and then: it advances the collective
     * without blocking, and completes it once it reports done. Else tcaCollWait completes it. */
    int done = 0;
    for (int polls = 0; !done && polls < 100; ++polls) CHECK(tcaCollTest(allreduce, &done));
    if (!done) CHECK(tcaCollWait(allreduce)); /* the result is in `sum`; `send` may change */
    for (int i = 0; i < COUNT; ++i)
      wrong |= sum[i] != (double)it * size * (size - 1) / 2 + size * i;

    /* At most one host-memory collective is in flight: the allgather starts after the wait. */
    all[rank] = sum[0] + rank;
    CHECK(tcaCollStart(allgather));
    CHECK(tcaCollWait(allgather));
    for (int r = 0; r < size; ++r) wrong |= all[r] != sum[0] + r;
  }

  CHECK(tcaCollFree(allreduce)); /* collective, before tcaFinalize */
  CHECK(tcaCollFree(allgather));
  CHECK(tcaFree(send));
  CHECK(tcaFree(sum));
  CHECK(tcaFree(all));
  CHECK(tcaFinalize());
  if (wrong)
    fprintf(stderr, "rank %d: wrong collective result\n", rank);
  else
    printf("rank %d of %d: %d iterations of both collectives ok\n", rank, size, ITERATIONS);
  return wrong ? 1 : 0;
}
