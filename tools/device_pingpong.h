// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A GPU-initiated ping-pong between two ranks through the device API (tca/tca_device.cuh): the
// initiator puts `bytes` with a signal (or as an inline message) and waits for the answer; the
// responder waits, then answers. Shared by tca-topo and tca-pingpong.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tca_tools {

struct PingPong {
  void* remote_dst;       // the peer's buffer (tcaDevicePointer); inline: the peer's mailbox
  const void* local_src;  // this rank's data
  size_t bytes;
  uint64_t* remote_signal;  // the peer's cell (tcaDeviceSignal)
  uint64_t* own_signal;     // this rank's cell, which the peer raises
  uint64_t first_value;     // signal values continue from here (cells only grow)
  int rounds;
  unsigned threads;  // 1: the thread form of put with signal; 32: the warp form; else the block's
  bool initiator;
  // Inline messages (tcaDeviceInlinePut / tcaDeviceInlineWait) instead of put with signal: the
  // message goes into the peer's mailbox at remote_dst with flag first_value + round, the answer
  // arrives in own_mailbox and is written to local_dst. Threads: 1, 32 (warp form) or a block.
  bool inline_message;
  const uint64_t* own_mailbox;
  void* local_dst;
  // Reference only: no data and no ordering, a relaxed flag store each way and relaxed polls
  // (the bare round trip of a store over the link, which put with signal builds on).
  bool bare_flag;
  // Where the initiator's thread 0 stores the GPU's global clock (ns) after the first round trip
  // and after the last (null: nowhere): the rounds between them, timed free of the two kernels'
  // launch and of the time one waits for the other to start.
  unsigned long long* clock;
};

// One block runs every round; the signal values used are first_value + 1 .. + rounds.
cudaError_t launch_device_pingpong(const PingPong& pingpong, cudaStream_t stream);

// Single messages: one put with signal (value `value`) by `threads` (1: the thread form, 32: the
// warp form, else the block form), and a wait until a signal reaches one.
cudaError_t launch_device_put_signal(void* remote_dst, const void* local_src, size_t bytes,
                                     uint64_t* remote_signal, uint64_t value, unsigned threads,
                                     cudaStream_t stream);
cudaError_t launch_device_signal_wait(const uint64_t* signal, uint64_t value, cudaStream_t stream);
// The bytes of a mailbox for inline messages of `bytes` (tcaInlineCells cells).
size_t inline_mailbox_bytes(size_t bytes);
// Single inline messages (block form): one put into the peer's mailbox, and one wait on the own.
cudaError_t launch_device_inline_put(uint64_t* remote_mailbox, const void* local_src, size_t bytes,
                                     uint32_t flag, cudaStream_t stream);
cudaError_t launch_device_inline_wait(const uint64_t* own_mailbox, void* local_dst, size_t bytes,
                                      uint32_t flag, cudaStream_t stream);

}  // namespace tca_tools
