// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/* Stream-ordered kicks captured in a CUDA graph (tca/tca_cuda.h): one round of a ring, recorded
 * once and replayed every iteration. In the stream: kick the chain into the next rank's GPU, wait
 * for the previous rank's data, copy it out, kick a credit back, wait for the next rank's credit.
 * Exits 77 (skipped) where a rank has no GPU. Run: mpirun -n 2 ./tca_example_stream_graph */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <tca/tca_coll.h>
#include <tca/tca_cuda.h>

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

enum { COUNT = 1 << 16, ROUNDS = 20, DATA = 0, CREDIT = 1 };

int main(void) {
  CHECK(tcaInit());
  int rank = 0, size = 0, device = 0, everywhere = 0, wrong = 0;
  CHECK(tcaRank(&rank));
  CHECK(tcaSize(&size));
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int usable = tcaCudaDevice(&device) == TCA_SUCCESS; /* the ranks agree by an allreduce */
  CHECK(tcaAllreduce(&usable, &everywhere, 1, TCA_INT32, TCA_MIN, NULL));
  if (!everywhere) {
    if (rank == 0) printf("skipped: needs a GPU on every rank\n");
    CHECK(tcaFinalize());
    return 77;
  }

  /* src, result: host memory (tcaMalloc pins it); dst: GPU memory, one more byte for credits. */
  const size_t bytes = COUNT * sizeof(int);
  int *src, *dst, *result;
  CHECK(tcaMalloc((void**)&src, bytes, TCA_MEM_CPU));
  CHECK(tcaMalloc((void**)&result, bytes, TCA_MEM_CPU));
  CHECK(tcaMalloc((void**)&dst, bytes + 1, TCA_MEM_GPU));
  tcaHandle src_h, dst_h, *all = malloc((size_t)size * sizeof *all);
  if (all == NULL) return 1;
  CHECK(tcaCreateHandle(&src_h, src, bytes, TCA_MEM_CPU));
  CHECK(tcaCreateHandle(&dst_h, dst, bytes + 1, TCA_MEM_GPU));
  CHECK(tcaAllgatherHandles(&dst_h, all));

  /* Two chains: the data to the next rank, and a byte of credit to the previous rank (any byte:
   * only its notification matters). Every transfer with a GPU end takes a CUDA path. */
  tcaDesc data, ack;
  CHECK(tcaDescNew(&data));
  CHECK(tcaDescSetMemcpy(data, &all[next], 0, &src_h, 0, bytes, TCA_FLAG_NOTIFY, DATA));
  CHECK(tcaDescSet(data, 0));
  CHECK(tcaDescNew(&ack));
  CHECK(tcaDescSetMemcpy(ack, &all[prev], bytes, &src_h, 0, 1, TCA_FLAG_NOTIFY, CREDIT));
  CHECK(tcaDescSet(ack, 1));

  /* Record one round: nothing runs while the stream is captured. */
  cudaStream_t stream;
  cudaGraph_t graph;
  cudaGraphExec_t round;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  CHECK(tcaStartDMADescStream(data, stream));
  CHECK(tcaWaitDMARecvDescStream(prev, DATA, stream)); /* the previous rank's data is in dst */
  CUDA_CHECK(cudaMemcpyAsync(result, dst, bytes, cudaMemcpyDeviceToHost, stream));
  CHECK(tcaStartDMADescStream(ack, stream));             /* dst may be written again */
  CHECK(tcaWaitDMARecvDescStream(next, CREDIT, stream)); /* the next rank has read ours */
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&round, graph, 0));

  for (int r = 0; r < ROUNDS; ++r) {
    for (int i = 0; i < COUNT; ++i) src[i] = rank << 24 | r << 16 | i;
    CUDA_CHECK(cudaGraphLaunch(round, stream)); /* each replay kicks and waits once more */
    CUDA_CHECK(cudaStreamSynchronize(stream));  /* the round is over: src may change */
    for (int i = 0; i < COUNT; ++i) wrong |= result[i] != (prev << 24 | r << 16 | i);
  }

  CUDA_CHECK(cudaGraphExecDestroy(round)); /* the graph goes before the chains it holds */
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CHECK(tcaDescFree(data));
  CHECK(tcaDescFree(ack));
  CHECK(tcaBarrier());
  CHECK(tcaFree(src));
  CHECK(tcaFree(result));
  CHECK(tcaFree(dst));
  free(all);
  CHECK(tcaFinalize());
  fprintf(wrong ? stderr : stdout, "rank %d of %d: %d graph replays %s\n", rank, size, ROUNDS,
          wrong ? "delivered WRONG data" : "ok");
  return wrong ? 1 : 0;
}
