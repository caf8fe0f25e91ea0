// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* Choosing a path: which transports reach a peer, which one TCA_PATH_AUTO takes at each size
 * (measured at start-up where several reach it), and a chain forced onto each path that is
 * available (tcaDescSetPath). TCA_TRANSPORT=shm|mpi|ucx in the environment makes AUTO prefer one.
 * Run: mpirun -n 2 ./tca_example_paths (any number of ranks). */
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca.h>

static void check(tcaResult result, const char* call, int line) {
  if (result == TCA_SUCCESS) return;
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, call, tcaGetLastErrorMessage());
  exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

enum { COUNT = 4096, PATHS = 4 };
static const tcaPath kPaths[PATHS] = {TCA_PATH_AUTO, TCA_PATH_SHM, TCA_PATH_MPI, TCA_PATH_UCX};
static const char* const kNames[PATHS] = {"auto", "shm", "mpi", "ucx"};

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

  /* What AUTO does between our host memory and the next rank's, per size. */
  const size_t sizes[3] = {8, 64 * 1024, 4 * 1024 * 1024};
  for (int s = 0; s < 3 && rank == 0; ++s) {
    const char *name = NULL, *table = NULL;
    CHECK(tcaAutoTransport(next, TCA_MEM_CPU, TCA_MEM_CPU, sizes[s], &name, &table));
    printf("rank 0 -> %d, %zu bytes: %s (by size: \"%s\")\n", next, sizes[s], name, table);
  }

  /* The destination has one part per path, so the paths' transfers never overlap. */
  const size_t bytes = COUNT * sizeof(int);
  int *src = NULL, *dst = NULL;
  CHECK(tcaMalloc((void**)&src, bytes, TCA_MEM_CPU));
  CHECK(tcaMalloc((void**)&dst, PATHS * bytes, TCA_MEM_CPU));
  for (int i = 0; i < COUNT; ++i) src[i] = rank * 100000 + i;
  tcaHandle src_handle, dst_handle;
  CHECK(tcaCreateHandle(&src_handle, src, bytes, TCA_MEM_CPU));
  CHECK(tcaCreateHandle(&dst_handle, dst, PATHS * bytes, TCA_MEM_CPU));
  tcaHandle* dsts = malloc((size_t)size * sizeof *dsts);
  if (dsts == NULL) return 1;
  CHECK(tcaAllgatherHandles(&dst_handle, dsts));

  for (int p = 0; p < PATHS; ++p) {
    /* Availability is the same seen from either end of a pair. */
    int to_next = 0, from_prev = 0;
    CHECK(tcaPathAvailable(kPaths[p], next, &to_next));
    CHECK(tcaPathAvailable(kPaths[p], prev, &from_prev));
    if (rank == 0) printf("path %s to rank %d: %s\n", kNames[p], next, to_next ? "yes" : "no");
    if (to_next) {
      tcaDesc chain; /* notification slot p: one slot per path */
      CHECK(tcaDescNew(&chain));
      CHECK(tcaDescSetMemcpy(chain, &dsts[next], p * bytes, &src_handle, 0, bytes, TCA_FLAG_NOTIFY,
                             p));
      CHECK(tcaDescSetPath(chain, kPaths[p])); /* before tcaDescSet */
      CHECK(tcaDescSet(chain, 0));
      CHECK(tcaStartDMADesc(chain));
      CHECK(tcaWaitDMAC(0));
      CHECK(tcaDescFree(chain));
    }
    if (from_prev) {
      CHECK(tcaWaitDMARecvDesc(prev, p, NULL));
      for (int i = 0; i < COUNT; ++i) wrong |= dst[p * COUNT + i] != prev * 100000 + i;
    }
  }
  const char* transport = NULL;
  CHECK(tcaPeerTransport(next, &transport)); /* what AUTO uses by default to that peer */
  if (rank == 0) printf("rank 0 -> %d: AUTO's default transport is %s\n", next, transport);

  CHECK(tcaBarrier());
  CHECK(tcaFree(src));
  CHECK(tcaFree(dst));
  free(dsts);
  CHECK(tcaFinalize());
  if (wrong)
    fprintf(stderr, "rank %d: wrong data from rank %d\n", rank, prev);
  else
    printf("rank %d of %d: every available path ok\n", rank, size);
  return wrong ? 1 : 0;
}
