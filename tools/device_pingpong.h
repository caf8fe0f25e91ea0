// A GPU-initiated ping-pong between two ranks through the device API (tca/tca_device.cuh): the
// initiator puts `bytes` with a signal and waits for the answer; the responder waits, then
// answers. Shared by tca-topo and tca-pingpong.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tca_tools {

struct PingPong {
  void* remote_dst;          // the peer's buffer (tcaDevicePointer)
  const void* local_src;     // this rank's data
  size_t bytes;
  uint64_t* remote_signal;   // the peer's cell (tcaDeviceSignal)
  uint64_t* own_signal;      // this rank's cell, which the peer raises
  uint64_t first_value;      // signal values continue from here (cells only grow)
  int rounds;
  unsigned threads;  // 1: the thread form of put with signal; more: the block form
  bool initiator;
  // Reference only: no data and no ordering, a relaxed flag store each way and relaxed polls
  // (the bare round trip of a store over the link, which put with signal builds on).
  bool bare_flag;
};

// One block runs every round; the signal values used are first_value + 1 .. + rounds.
cudaError_t launch_device_pingpong(const PingPong& pingpong, cudaStream_t stream);

// Single messages: one put with signal (value `value`), and a wait until a signal reaches one.
cudaError_t launch_device_put_signal(void* remote_dst, const void* local_src, size_t bytes,
                                     uint64_t* remote_signal, uint64_t value,
                                     cudaStream_t stream);
cudaError_t launch_device_signal_wait(const uint64_t* signal, uint64_t value,
                                      cudaStream_t stream);

}  // namespace tca_tools
