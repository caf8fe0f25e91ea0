#include "gpu_kernels.h"
#include "tca/tca_device.cuh"

namespace tca_test {
namespace {

__device__ uint8_t round_byte(int rank, uint64_t round, size_t offset) {
  uint64_t x = (static_cast<uint64_t>(rank) << 40) ^ (round << 20) ^ (offset >> 3);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<uint8_t>(x >> (8 * (offset & 7)));
}

__global__ void fill_kernel(uint8_t* data, size_t bytes, int rank, const uint64_t* round) {
  const uint64_t r = *round;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x)
    data[i] = round_byte(rank, r, i);
}

__global__ void check_kernel(const uint8_t* data, size_t bytes, int rank, const uint64_t* round,
                             unsigned long long* mismatches) {
  const uint64_t r = *round;
  unsigned long long wrong = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x)
    wrong += data[i] != round_byte(rank, r, i);
  if (wrong != 0) atomicAdd(mismatches, wrong);
}

__global__ void advance_kernel(uint64_t* round) { ++*round; }

template <PutForm kForm>
__global__ void ring_kernel(RingPut ring) {
  for (int round = 1; round <= ring.rounds; ++round) {
    const uint64_t value = ring.add ? 1 : static_cast<uint64_t>(round);
    const tcaSignalOp op = ring.add ? TCA_SIGNAL_ADD : TCA_SIGNAL_SET;
    if (kForm == PutForm::kThread) {
      tcaDevicePutSignal(ring.remote_dst, ring.src, ring.bytes, ring.remote_signal, value, op);
    } else if (kForm == PutForm::kWarp) {
      tcaDevicePutSignalWarp(ring.remote_dst, ring.src, ring.bytes, ring.remote_signal, value,
                             op);
    } else {
      tcaDevicePutSignalBlock(ring.remote_dst, ring.src, ring.bytes, ring.remote_signal, value,
                              op);
    }
    if (threadIdx.x == 0)
      tcaDeviceSignalWaitUntil(ring.own_signal, TCA_CMP_GE, static_cast<uint64_t>(round));
    __syncthreads();
  }
  tcaDeviceQuiet();
}

}  // namespace

cudaError_t fill_round_pattern(void* data, size_t bytes, int rank, const uint64_t* round,
                               cudaStream_t stream) {
  fill_kernel<<<256, 256, 0, stream>>>(static_cast<uint8_t*>(data), bytes, rank, round);
  return cudaGetLastError();
}

cudaError_t count_round_mismatches(const void* data, size_t bytes, int rank,
                                   const uint64_t* round, unsigned long long* mismatches,
                                   cudaStream_t stream) {
  check_kernel<<<256, 256, 0, stream>>>(static_cast<const uint8_t*>(data), bytes, rank, round,
                                        mismatches);
  return cudaGetLastError();
}

cudaError_t advance_round(uint64_t* round, cudaStream_t stream) {
  advance_kernel<<<1, 1, 0, stream>>>(round);
  return cudaGetLastError();
}

cudaError_t run_device_ring(PutForm form, const RingPut& ring, cudaStream_t stream) {
  switch (form) {
    case PutForm::kThread: ring_kernel<PutForm::kThread><<<1, 1, 0, stream>>>(ring); break;
    case PutForm::kWarp: ring_kernel<PutForm::kWarp><<<1, 32, 0, stream>>>(ring); break;
    case PutForm::kBlock: ring_kernel<PutForm::kBlock><<<1, 256, 0, stream>>>(ring); break;
  }
  return cudaGetLastError();
}

}  // namespace tca_test
