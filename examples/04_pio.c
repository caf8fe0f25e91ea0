// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* PIO: plain CPU stores straight into the next rank's memory through tcaPIOPointer, then
 * tcaPIOFence (the stores are ordered before what follows) and tcaNotify. Where the peer's memory
 * is not mapped here (another host, or TCA_TRANSPORT=mpi), tcaPIOPointer answers
 * TCA_ERROR_UNSUPPORTED and the program sends the same bytes with tcaPut instead.
 * Run: mpirun -n 2 ./tca_example_pio (any number of ranks). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca.h>

static void check(tcaResult result, const char* call, int line) {
  if (result == TCA_SUCCESS) return;
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, call, tcaGetLastErrorMessage());
  exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

enum { COUNT = 256, ROUNDS = 50, DATA_SLOT = 0, CREDIT_SLOT = 1 };

static uint32_t value(int rank, int round, int i) {
  return (uint32_t)rank << 24 | (uint32_t)round << 12 | (uint32_t)i;
}

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const size_t bytes = COUNT * sizeof(uint32_t);

  /* The mailbox the previous rank writes into: tcaMalloc memory, so same-host peers can map it. */
  uint32_t* mailbox = NULL;
  CHECK(tcaMalloc((void**)&mailbox, bytes, TCA_MEM_CPU));
  tcaHandle mine;
  CHECK(tcaCreateHandle(&mine, mailbox, bytes, TCA_MEM_CPU));
  tcaHandle* all = malloc((size_t)size * sizeof *all);
  if (all == NULL) return 1;
  CHECK(tcaAllgatherHandles(&mine, all));

  /* A pointer into the next rank's mailbox, valid until its owner frees it. */
  uint32_t* remote = NULL;
  uint32_t staging[COUNT];
  const tcaResult mapped = tcaPIOPointer((void**)&remote, &all[next], 0, bytes);
  if (mapped == TCA_ERROR_UNSUPPORTED) {
    printf("rank %d: no PIO to rank %d (%s): using tcaPut\n", rank, next, tcaGetLastErrorMessage());
    remote = NULL;
  } else {
    CHECK(mapped);
  }

  for (int round = 0; round < ROUNDS; ++round) {
    if (round > 0) CHECK(tcaWaitDMARecvDesc(next, CREDIT_SLOT, NULL)); /* mailbox read */
    uint32_t* target = remote != NULL ? remote : staging;
    for (int i = 0; i < COUNT; ++i) target[i] = value(rank, round, i); /* the stores */
    if (remote == NULL) CHECK(tcaPut(&all[next], 0, staging, bytes));
    CHECK(tcaPIOFence());              /* every store above before the notification */
    CHECK(tcaNotify(next, DATA_SLOT)); /* "your mailbox is full" */

    CHECK(tcaWaitDMARecvDesc(prev, DATA_SLOT, NULL));
    for (int i = 0; i < COUNT; ++i) wrong |= mailbox[i] != value(prev, round, i);
    CHECK(tcaNotify(prev, CREDIT_SLOT));
  }
  CHECK(tcaWaitDMARecvDesc(next, CREDIT_SLOT, NULL));

  CHECK(tcaBarrier()); /* nobody stores through a PIO pointer into our mailbox any more */
  CHECK(tcaFree(mailbox));
  free(all);
  CHECK(tcaFinalize());
  if (wrong)
    fprintf(stderr, "rank %d: wrong data in the mailbox\n", rank);
  else
    printf("rank %d of %d: %d rounds by %s ok\n", rank, size, ROUNDS, remote ? "PIO" : "put");
  return wrong ? 1 : 0;
}
