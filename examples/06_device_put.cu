// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* A GPU put from inside a kernel (tca/tca_device.cuh): every round, each rank's kernel fills its
 * buffer, puts it into the next rank's GPU buffer with a signal, waits for the previous rank's
 * signal, checks what arrived and gives the previous rank a credit; no host call in between.
 * Exits 77 (skipped) where a rank has no GPU. Run: mpirun -n 2 ./tca_example_device_put */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca_coll.h>
#include <tca/tca_cuda.h>

#include <tca/tca_device.cuh>

static void fail(const char* call, int line, const char* why) {
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, call, why);
  exit(1);
}
static void check(tcaResult result, const char* call, int line) {
  if (result != TCA_SUCCESS) fail(call, line, tcaGetLastErrorMessage());
}
static void cuda_check(cudaError_t error, const char* call, int line) {
  if (error != cudaSuccess) fail(call, line, cudaGetErrorString(error));
}
#define CHECK(call) check((call), #call, __LINE__)
#define CUDA_CHECK(call) cuda_check((call), #call, __LINE__)

enum { COUNT = 1 << 16, ROUNDS = 10, DATA = 0, CREDIT = 1 }; /* DATA, CREDIT: signal cells */
struct Ring {
  int *src, *dst, *next_dst; /* ours, ours, the next rank's (mapped for our kernels) */
  uint64_t *my_data, *next_data, *my_credit, *prev_credit; /* signal cells */
  unsigned long long* wrong;                               /* count of wrong ints received */
  int rank, prev;
};
__device__ int value(int rank, uint64_t round, int i) { return rank << 24 | (int)round << 16 | i; }

__global__ void ring_round(Ring ring, uint64_t round) {
  /* The next rank has read round - 1 (cells start at 0, so round 1 goes at once). */
  if (threadIdx.x == 0) tcaDeviceSignalWaitUntil(ring.my_credit, TCA_CMP_GE, round - 1);
  __syncthreads();
  for (int i = threadIdx.x; i < COUNT; i += blockDim.x) ring.src[i] = value(ring.rank, round, i);
  __syncthreads();
  /* The whole block copies; the signal is raised once the data is visible at the peer. */
  tcaDevicePutSignalBlock(ring.next_dst, ring.src, COUNT * sizeof(int), ring.next_data, round,
                          TCA_SIGNAL_SET);
  if (threadIdx.x == 0) tcaDeviceSignalWaitUntil(ring.my_data, TCA_CMP_GE, round);
  __syncthreads(); /* what thread 0's acquire made visible, the barrier gives the block */
  for (int i = threadIdx.x; i < COUNT; i += blockDim.x)
    if (ring.dst[i] != value(ring.prev, round, i)) atomicAdd(ring.wrong, 1ull);
  __syncthreads();
  if (threadIdx.x == 0) tcaDeviceSignalOp(ring.prev_credit, round, TCA_SIGNAL_SET);
}

int main() {
  CHECK(tcaInit());
  int rank = 0, size = 0, device = 0, everywhere = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int usable = tcaCudaDevice(&device) == TCA_SUCCESS; /* the ranks agree by an allreduce */
  CHECK(tcaAllreduce(&usable, &everywhere, 1, TCA_INT32, TCA_MIN, nullptr));
  if (!everywhere) {
    if (rank == 0) printf("skipped: needs a GPU on every rank\n");
    CHECK(tcaFinalize());
    return 77;
  }

  Ring ring{};
  ring.rank = rank, ring.prev = prev;
  const size_t bytes = COUNT * sizeof(int);
  CHECK(tcaMalloc((void**)&ring.src, bytes, TCA_MEM_GPU));
  CHECK(tcaMalloc((void**)&ring.dst, bytes, TCA_MEM_GPU));
  tcaHandle mine, *all = (tcaHandle*)malloc(size * sizeof(tcaHandle));
  CHECK(tcaCreateHandle(&mine, ring.dst, bytes, TCA_MEM_GPU));
  CHECK(tcaAllgatherHandles(&mine, all));
  /* Addresses for our kernels: the next rank's buffer and signal cells of three ranks. */
  CHECK(tcaDevicePointer((void**)&ring.next_dst, &all[next], 0, bytes));
  CHECK(tcaDeviceSignal(&ring.my_data, rank, DATA));
  CHECK(tcaDeviceSignal(&ring.next_data, next, DATA));
  CHECK(tcaDeviceSignal(&ring.my_credit, rank, CREDIT));
  CHECK(tcaDeviceSignal(&ring.prev_credit, prev, CREDIT));
  CUDA_CHECK(cudaMalloc(&ring.wrong, sizeof *ring.wrong));
  CUDA_CHECK(cudaMemset(ring.wrong, 0, sizeof *ring.wrong));

  for (uint64_t round = 1; round <= ROUNDS; ++round) ring_round<<<1, 256>>>(ring, round);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long wrong = 0;
  CUDA_CHECK(cudaMemcpy(&wrong, ring.wrong, sizeof wrong, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(ring.wrong));
  CHECK(tcaBarrier()); /* no kernel of a peer writes into our buffer any more */
  CHECK(tcaFree(ring.src));
  CHECK(tcaFree(ring.dst));
  free(all);
  CHECK(tcaFinalize());
  fprintf(wrong ? stderr : stdout, "rank %d of %d: %d rounds of device puts, %llu wrong ints\n",
          rank, size, ROUNDS, wrong);
  return wrong ? 1 : 0;
}
