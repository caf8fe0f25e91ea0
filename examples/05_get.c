// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* Get, the pseudo-read: data of a peer's region is written into local memory while the peer
 * does nothing. Two forms: tcaGet, and a chain whose source is the peer's handle and whose
 * destination is local, built once and kicked every round; its notification is raised at this
 * rank itself. The owner says when its data is ready; the reader says when it is done.
 * Run: mpirun -n 3 ./tca_example_get (any number of ranks). */
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca.h>

static void check(tcaResult result, const char* call, int line) {
  if (result == TCA_SUCCESS) return;
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, call, tcaGetLastErrorMessage());
  exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

enum { COUNT = 2048, ROUNDS = 20, READY = 0, READ = 1, PULLED = 2, CHANNEL = 0 };

static double value(int rank, int round, int i) { return rank * 1e6 + round * 1e4 + i; }

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const size_t bytes = COUNT * sizeof(double);

  /* `data` is read by the next rank; `copy` receives what we read from the previous one. */
  double *data = NULL, *copy = NULL;
  CHECK(tcaMalloc((void**)&data, bytes, TCA_MEM_CPU));
  CHECK(tcaMalloc((void**)&copy, bytes, TCA_MEM_CPU));
  tcaHandle data_handle, copy_handle;
  CHECK(tcaCreateHandle(&data_handle, data, bytes, TCA_MEM_CPU));
  CHECK(tcaCreateHandle(&copy_handle, copy, bytes, TCA_MEM_CPU));
  tcaHandle* all = malloc((size_t)size * sizeof *all);
  if (all == NULL) return 1;
  CHECK(tcaAllgatherHandles(&data_handle, all));

  /* The pull chain: previous rank's data -> our copy, notifying PULLED here when it has landed. */
  tcaDesc pull;
  CHECK(tcaDescNew(&pull));
  CHECK(tcaDescSetMemcpy(pull, &copy_handle, 0, &all[prev], 0, bytes, TCA_FLAG_NOTIFY, PULLED));
  CHECK(tcaDescSet(pull, CHANNEL));

  for (int round = 0; round < ROUNDS; ++round) {
    /* Owner: once the reader is done with the last round, write new data and say so. */
    if (round > 0) CHECK(tcaWaitDMARecvDesc(next, READ, NULL));
    for (int i = 0; i < COUNT; ++i) data[i] = value(rank, round, i);
    CHECK(tcaNotify(next, READY));

    /* Reader: wait until the previous rank's data is ready, then read it. */
    CHECK(tcaWaitDMARecvDesc(prev, READY, NULL));
    if (round % 2 == 0) {
      CHECK(tcaGet(copy, &all[prev], 0, bytes)); /* returns once the data is here */
    } else {
      CHECK(tcaStartDMADesc(pull));
      CHECK(tcaWaitDMARecvDesc(rank, PULLED, NULL)); /* raised by ourselves */
      CHECK(tcaWaitDMAC(CHANNEL));
    }
    for (int i = 0; i < COUNT; ++i) wrong |= copy[i] != value(prev, round, i);
    CHECK(tcaNotify(prev, READ));
  }
  CHECK(tcaWaitDMARecvDesc(next, READ, NULL));

  CHECK(tcaDescFree(pull));
  CHECK(tcaBarrier());
  CHECK(tcaFree(data));
  CHECK(tcaFree(copy));
  free(all);
  CHECK(tcaFinalize());
  if (wrong)
    fprintf(stderr, "rank %d: wrong data read from rank %d\n", rank, prev);
  else
    printf("rank %d of %d: %d rounds of get ok\n", rank, size, ROUNDS);
  return wrong ? 1 : 0;
}
