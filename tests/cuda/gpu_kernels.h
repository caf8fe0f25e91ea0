// Kernels of the GPU tests, behind plain launchers (the tests themselves are host C++).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tca_test {

// Fills `bytes` with a pattern of (rank, *round + round_offset); *round lives in device memory
// so that a captured graph sees a new round at every replay.
cudaError_t fill_round_pattern(void* data, size_t bytes, int rank, const uint64_t* round,
                               cudaStream_t stream);
// Counts into *mismatches the bytes that differ from that pattern.
cudaError_t count_round_mismatches(const void* data, size_t bytes, int rank,
                                   const uint64_t* round, unsigned long long* mismatches,
                                   cudaStream_t stream);
cudaError_t advance_round(uint64_t* round, cudaStream_t stream);

// The device API in a ring: `rounds` times, put `bytes` from `src` into the next rank's `dst`
// with a signal (thread, warp or block form), then wait until this rank's own signal has seen
// the round. SET signals carry the round; ADD signals add one per round.
enum class PutForm { kThread, kWarp, kBlock };
struct RingPut {
  void* remote_dst;
  const void* src;
  size_t bytes;
  uint64_t* remote_signal;
  uint64_t* own_signal;
  bool add;
  int rounds;
};
cudaError_t run_device_ring(PutForm form, const RingPut& ring, cudaStream_t stream);

}  // namespace tca_test
