// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* A ring of chained DMA with notification: each rank builds once a chain that copies its buffer
 * into the next rank's and raises a notification there; every iteration only kicks it. A second
 * notification returns a credit: the receiver has read the data, the sender may send again.
 * Run: mpirun -n 4 ./tca_example_ring_chain (any number of ranks). */
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

/* Slots [0, TCA_USER_NOTIFY_SLOTS) and channels [0, TCA_USER_DMA_CHANNELS) are the program's. */
enum { COUNT = 4096, ITERATIONS = 100, DATA_SLOT = 0, CREDIT_SLOT = 1, CHANNEL = 0 };

static uint64_t value(int rank, int iteration, int i) {
  return ((uint64_t)rank << 40) | ((uint64_t)iteration << 20) | (uint64_t)i;
}

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const size_t bytes = COUNT * sizeof(uint64_t);

  /* Both ends of a chain are registered regions. Only the destination's handle travels: the
   * source is this rank's own. */
  uint64_t *src = NULL, *dst = NULL;
  CHECK(tcaMalloc((void**)&src, bytes, TCA_MEM_CPU));
  CHECK(tcaMalloc((void**)&dst, bytes, TCA_MEM_CPU));
  tcaHandle src_handle, dst_handle;
  CHECK(tcaCreateHandle(&src_handle, src, bytes, TCA_MEM_CPU));
  CHECK(tcaCreateHandle(&dst_handle, dst, bytes, TCA_MEM_CPU));
  tcaHandle* dsts = malloc((size_t)size * sizeof *dsts);
  if (dsts == NULL) return 1;
  CHECK(tcaAllgatherHandles(&dst_handle, dsts));

  /* The chain, built once: one transfer src -> next rank's dst that notifies DATA_SLOT there
   * once its data is visible. tcaDescSet binds it to a channel and pays all the set-up. */
  tcaDesc chain;
  CHECK(tcaDescNew(&chain));
  CHECK(tcaDescSetMemcpy(chain, &dsts[next], 0, &src_handle, 0, bytes, TCA_FLAG_NOTIFY, DATA_SLOT));
  CHECK(tcaDescSet(chain, CHANNEL));

  for (int it = 0; it < ITERATIONS; ++it) {
    /* From the second iteration on, the next rank must have read what we sent before. */
    if (it > 0) CHECK(tcaWaitDMARecvDesc(next, CREDIT_SLOT, NULL));
    for (int i = 0; i < COUNT; ++i) src[i] = value(rank, it, i);
    CHECK(tcaStartDMADesc(chain));                    /* the kick: cheap, everything was prepared */
    CHECK(tcaWaitDMAC(CHANNEL));                      /* complete here: src may be changed again */
    CHECK(tcaWaitDMARecvDesc(prev, DATA_SLOT, NULL)); /* the previous rank's data is in dst */
    for (int i = 0; i < COUNT; ++i) wrong |= dst[i] != value(prev, it, i);
    CHECK(tcaNotify(prev, CREDIT_SLOT)); /* dst may be written again */
  }
  CHECK(tcaWaitDMARecvDesc(next, CREDIT_SLOT, NULL)); /* the last credit */

  CHECK(tcaDescFree(chain));
  CHECK(tcaBarrier());
  CHECK(tcaFree(src)); /* tcaFree also deregisters the regions inside the block */
  CHECK(tcaFree(dst));
  free(dsts);
  CHECK(tcaFinalize());
  if (wrong)
    fprintf(stderr, "rank %d: wrong data from rank %d\n", rank, prev);
  else
    printf("rank %d of %d: %d iterations of the ring ok\n", rank, size, ITERATIONS);
  return wrong ? 1 : 0;
}
