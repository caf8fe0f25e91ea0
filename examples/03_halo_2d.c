// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* A 2D halo exchange with block-stride transfers. The ranks split a periodic grid into vertical
 * strips; each rank keeps NY rows of NX columns plus a ghost column on either side. A column is
 * NY blocks of one double, one row pitch apart: one tcaDescSetMemcpy2D moves it.
 * Run: mpirun -n 3 ./tca_example_halo_2d (any number of ranks). */
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca.h>

static void check(tcaResult result, const char* call, int line) {
  if (result == TCA_SUCCESS) return;
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, call, tcaGetLastErrorMessage());
  exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

enum { NX = 64, NY = 48, STEPS = 10, FROM_LEFT = 0, FROM_RIGHT = 1, CREDIT = 2, CHANNEL = 0 };
#define PITCH ((NX + 2) * sizeof(double)) /* bytes per row, ghosts included */
#define OFFSET(y, x) ((size_t)(y) * PITCH + (size_t)(x) * sizeof(double))
#define CELL(y, x) grid[(size_t)(y) * (NX + 2) + (size_t)(x)] /* the double at (y, x) */

static double value(int rank, int step, int y, int x) {
  return rank * 1e6 + step * 1e4 + y * 100 + x;
}

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;

  double* grid = NULL; /* NY rows of NX + 2 columns: column 0 and NX + 1 are the ghosts */
  CHECK(tcaMalloc((void**)&grid, NY * PITCH, TCA_MEM_CPU));
  tcaHandle mine;
  CHECK(tcaCreateHandle(&mine, grid, NY * PITCH, TCA_MEM_CPU));
  tcaHandle* all = malloc((size_t)size * sizeof *all);
  if (all == NULL) return 1;
  CHECK(tcaAllgatherHandles(&mine, all));

  /* One chain, two block-stride transfers: our first column into the left rank's right ghost,
   * our last column into the right rank's left ghost, each notifying its receiver. */
  tcaDesc halo;
  CHECK(tcaDescNew(&halo));
  CHECK(tcaDescSetMemcpy2D(halo, &all[left], OFFSET(0, NX + 1), PITCH, &mine, OFFSET(0, 1), PITCH,
                           sizeof(double), NY, TCA_FLAG_NOTIFY, FROM_RIGHT));
  CHECK(tcaDescSetMemcpy2D(halo, &all[right], OFFSET(0, 0), PITCH, &mine, OFFSET(0, NX), PITCH,
                           sizeof(double), NY, TCA_FLAG_NOTIFY, FROM_LEFT));
  CHECK(tcaDescSet(halo, CHANNEL));

  for (int step = 0; step < STEPS; ++step) {
    /* Both neighbours must have read the ghosts we wrote into them last step. */
    if (step > 0) {
      CHECK(tcaWaitDMARecvDesc(left, CREDIT, NULL));
      CHECK(tcaWaitDMARecvDesc(right, CREDIT, NULL));
    }
    for (int y = 0; y < NY; ++y) /* "compute" the interior */
      for (int x = 1; x <= NX; ++x) CELL(y, x) = value(rank, step, y, x);
    CHECK(tcaStartDMADesc(halo));
    CHECK(tcaWaitDMAC(CHANNEL));
    CHECK(tcaWaitDMARecvDesc(left, FROM_LEFT, NULL));   /* left ghost column filled */
    CHECK(tcaWaitDMARecvDesc(right, FROM_RIGHT, NULL)); /* right ghost column filled */
    for (int y = 0; y < NY; ++y) {
      wrong |= CELL(y, 0) != value(left, step, y, NX);
      wrong |= CELL(y, NX + 1) != value(right, step, y, 1);
    }
    CHECK(tcaNotify(left, CREDIT)); /* our ghosts are free again */
    CHECK(tcaNotify(right, CREDIT));
  }
  CHECK(tcaWaitDMARecvDesc(left, CREDIT, NULL));
  CHECK(tcaWaitDMARecvDesc(right, CREDIT, NULL));

  CHECK(tcaDescFree(halo));
  CHECK(tcaBarrier());
  CHECK(tcaFree(grid));
  free(all);
  CHECK(tcaFinalize());
  if (wrong)
    fprintf(stderr, "rank %d: wrong ghost values\n", rank);
  else
    printf("rank %d of %d: %d halo exchanges ok\n", rank, size, STEPS);
  return wrong ? 1 : 0;
}
