// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
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
cudaError_t count_round_mismatches(const void* data, size_t bytes, int rank, const uint64_t* round,
                                   unsigned long long* mismatches, cudaStream_t stream);
cudaError_t advance_round(uint64_t* round, cudaStream_t stream);
// One thread that spins until *release (host memory mapped for the GPU) is nonzero, or sets
// *timed_out to 1 and ends after `timeout_ns`.
cudaError_t hold_until_released(const uint32_t* release, uint64_t* timed_out, uint64_t timeout_ns,
                                cudaStream_t stream);

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

// Inline messages (tcaDeviceInlinePut / tcaDeviceInlineWait) in a ring, in thread, warp or
// block form: `rounds` times, fill src + src_offset with this round's pattern of (rank, flag),
// put it into the next rank's mailbox with flag first_flag + round, wait for the previous
// rank's message into dst + dst_offset and compare all of [dst, dst + dst_bytes) with what it
// must hold (that message, kPoison around it), counting wrong bytes into *mismatches. A rank
// puts the next message only once the next rank has acknowledged the previous one (own_ack
// reaches ack_base + round - 1; it acknowledges on remote_ack with ack_base + round).
struct RingInline {
  uint64_t* remote_mailbox;
  const uint64_t* own_mailbox;
  uint8_t* src;
  size_t src_offset;
  uint8_t* dst;
  size_t dst_offset;
  size_t dst_bytes;
  size_t bytes;
  uint32_t first_flag;
  int rounds;
  int rank;
  int prev;
  uint64_t* remote_ack;
  uint64_t* own_ack;
  uint64_t ack_base;
  unsigned long long* mismatches;
};
cudaError_t run_inline_ring(PutForm form, const RingInline& ring, cudaStream_t stream);
// The bytes of a mailbox for inline messages of `bytes`.
size_t inline_mailbox_bytes(size_t bytes);

}  // namespace tca_test
