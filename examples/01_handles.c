// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* Handles: register memory, exchange the handles, check one, then put into and get from a
 * peer's region. Run: mpirun -n 2 ./tca_example_handles (any number of ranks). */
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca.h>

/* Every call returns a tcaResult; on failure tcaGetLastErrorMessage() says what and where. */
static void check(tcaResult result, const char* call, int line) {
  if (result == TCA_SUCCESS) return;
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, call, tcaGetLastErrorMessage());
  exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

enum { COUNT = 1024 }; /* ints per half of each rank's region */

int main(void) {
  CHECK(tcaInit()); /* also initializes MPI, since this program did not */
  int rank = 0, size = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

  /* One region per rank: the first half holds the rank's own data, the second half receives
   * what the previous rank puts. Memory from tcaMalloc is mapped by peers on the same host, so
   * their transfers are a single memcpy; tcaCreateHandle also accepts memory of your own. */
  const size_t bytes = 2 * COUNT * sizeof(int);
  int* region = NULL;
  CHECK(tcaMalloc((void**)&region, bytes, TCA_MEM_CPU));
  for (int i = 0; i < COUNT; ++i) region[i] = rank * 100000 + i;
  for (int i = COUNT; i < 2 * COUNT; ++i) region[i] = -1;
  tcaHandle mine;
  CHECK(tcaCreateHandle(&mine, region, bytes, TCA_MEM_CPU));

  /* A handle is plain bytes; tcaAllgatherHandles (collective) gives every rank all of them. */
  tcaHandle* all = malloc((size_t)size * sizeof *all);
  if (all == NULL) return 1;
  CHECK(tcaAllgatherHandles(&mine, all));

  /* tcaHandleInfo checks a handle (intact, made by this job, region alive) and describes it. */
  for (int r = 0; r < size; ++r) {
    int owner = -1;
    size_t region_bytes = 0;
    tcaMemKind kind = TCA_MEM_GPU;
    CHECK(tcaHandleInfo(&all[r], &owner, &region_bytes, &kind));
    if (owner != r || region_bytes != bytes || kind != TCA_MEM_CPU) wrong = 1;
  }

  /* Put: copy our own half into the second half of the next rank's region, then notify it
   * (slot 0). A notification is raised after all earlier traffic to that rank is visible. */
  CHECK(tcaPut(&all[next], COUNT * sizeof(int), region, COUNT * sizeof(int)));
  CHECK(tcaNotify(next, 0));
  CHECK(tcaWaitDMARecvDesc(prev, 0, NULL)); /* the previous rank's put has landed here */
  for (int i = 0; i < COUNT; ++i) wrong |= region[COUNT + i] != prev * 100000 + i;

  /* Get: read the next rank's first half into local memory (the peer does nothing). It wrote
   * that half before tcaAllgatherHandles, a collective, so it is there to read. */
  int* copy = malloc(COUNT * sizeof(int));
  if (copy == NULL) return 1;
  CHECK(tcaGet(copy, &all[next], 0, COUNT * sizeof(int)));
  for (int i = 0; i < COUNT; ++i) wrong |= copy[i] != next * 100000 + i;

  /* Errors are values: a put past the end of the region is refused, and nothing is written. */
  const tcaResult refused = tcaPut(&all[next], bytes - 4, copy, 8);
  if (refused != TCA_ERROR_OUT_OF_BOUNDS) wrong = 1;
  if (rank == 0) printf("an out-of-bounds put: %s\n", tcaGetLastErrorMessage());

  /* Nobody may still read our region when it goes away. */
  CHECK(tcaBarrier());
  CHECK(tcaDestroyHandle(&mine));
  CHECK(tcaFree(region));
  free(copy);
  free(all);
  CHECK(tcaFinalize());
  if (wrong)
    fprintf(stderr, "rank %d: wrong data or handle information\n", rank);
  else
    printf("rank %d of %d: handles, put and get ok\n", rank, size);
  return wrong ? 1 : 0;
}
