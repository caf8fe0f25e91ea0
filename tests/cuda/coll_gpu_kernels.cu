// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll_gpu_kernels.h"
#include "coll_values.h"
#include "tca/tca_coll_device.cuh"

namespace tca_test {
namespace {

constexpr int kBlocks = 256;
constexpr int kThreads = 256;

__global__ void collective_kernel(tcaDeviceColl coll, int iterations, uint64_t* error) {
  for (int i = 0; i < iterations; ++i) {
    // Every thread of a block gets the same result: the block leaves together.
    const int result = tcaDeviceCollRun(coll);
    if (result != 0) {
      if (threadIdx.x == 0)
        atomicCAS(reinterpret_cast<unsigned long long*>(error), 0ull,
                  static_cast<unsigned long long>(result));
      return;
    }
  }
}

__global__ void fill_kernel(void* sendbuf, tcaDataType type, size_t count, int rank,
                            const uint64_t* round) {
  const int r = static_cast<int>(*round);
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    store(type, sendbuf, i, contribution(rank, i, r));
}

__global__ void check_kernel(const unsigned char* recvbuf, tcaCollKind kind, tcaDataType type,
                             size_t element, tcaRedOp op, size_t count, int ranks,
                             const uint64_t* round, unsigned long long* mismatches) {
  const int r = static_cast<int>(*round);
  const size_t elements = kind == TCA_COLL_ALLGATHER ? count * ranks : count;
  unsigned long long wrong = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < elements;
       i += gridDim.x * blockDim.x) {
    alignas(8) unsigned char expected[8];
    store(type, expected, 0, result_element(kind, op, count, ranks, i, r));
    for (size_t b = 0; b < element; ++b)
      if (recvbuf[i * element + b] != expected[b]) {
        ++wrong;
        break;
      }
  }
  if (wrong != 0) atomicAdd(mismatches, wrong);
}

}  // namespace

cudaError_t run_device_collective(tcaDeviceColl coll, int grid_blocks, int threads, int iterations,
                                  uint64_t* error, cudaStream_t stream) {
  collective_kernel<<<grid_blocks, threads, 0, stream>>>(coll, iterations, error);
  return cudaGetLastError();
}

cudaError_t fill_contribution(void* sendbuf, tcaDataType type, size_t count, int rank,
                              const uint64_t* round, cudaStream_t stream) {
  fill_kernel<<<kBlocks, kThreads, 0, stream>>>(sendbuf, type, count, rank, round);
  return cudaGetLastError();
}

cudaError_t count_result_mismatches(const void* recvbuf, tcaCollKind kind, tcaDataType type,
                                    tcaRedOp op, size_t count, int ranks, const uint64_t* round,
                                    unsigned long long* mismatches, cudaStream_t stream) {
  check_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<const unsigned char*>(recvbuf), kind,
                                                 type, tcaDataTypeSize(type), op, count, ranks,
                                                 round, mismatches);
  return cudaGetLastError();
}

}  // namespace tca_test
