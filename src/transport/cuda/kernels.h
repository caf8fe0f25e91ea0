// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The CUDA transport's kernels, as host code sees them: plain structs the kernels read and
// launchers that return the CUDA error. Implemented in kernels.cu; kept free of tca's error
// machinery so that only host compilers see fmt.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tca {

// One transfer as the SM copy kernel moves it: `units / units_per_row` rows of `units_per_row`
// units of `unit_bytes` bytes (a power of two up to 16 that divides both ends' addresses and
// pitches, so that every access is naturally aligned).
//
// Narrow rows (`narrow_rows` > 1) whose one end is packed take another form, so that the packed
// end moves 16 bytes per access: unit u is `narrow_rows` consecutive rows of `unit_bytes` bytes
// (16 in all), at 16 * u of the packed end and at rows narrow_rows * u, ... of the pitched one.
// `packed_dst` says which end is packed (a gather into it, or a scatter from it).
struct SmPiece {
  unsigned char* dst;
  const unsigned char* src;
  uint64_t dst_pitch;
  uint64_t src_pitch;
  uint64_t units_per_row;
  uint64_t first_unit;  // where the piece starts in the launch's numbering of units
  uint64_t units;
  uint32_t unit_bytes;
  uint32_t narrow_rows;  // 0 or 1: the plain form
  uint32_t packed_dst;
};

// A notification the GPU raises: one more on the sender's sequence `counter` of the
// (receiver, slot), published with a system-scope release in the receiver's `cell`.
struct NotifyTarget {
  uint64_t* counter;
  uint64_t* cell;
};

// Notifications a host kick publishes with host-counted values, carried in the launch itself.
constexpr uint32_t kInlineNotifyValues = 8;

// Everything an SM copy launch reads; the tables live in device memory.
struct SmCopyParams {
  const SmPiece* pieces;
  SmPiece first_piece;  // pieces[0]: a launch of one piece reads it here, not from the table
  uint32_t piece_count;
  uint64_t total_units;
  const NotifyTarget* notifies;  // raised in order once every block has stored its units
  uint32_t notify_count;
  uint32_t count_on_gpu;  // 1: advance each target's counter; 0: publish `values`
  uint64_t values[kInlineNotifyValues];
  unsigned int* blocks_done;  // zero between launches; counts finished blocks when notifying
};

// Threads per block of the SM copy kernel and the units each thread keeps in flight.
constexpr unsigned kSmCopyThreads = 512;
constexpr unsigned kSmCopyUnroll = 4;

cudaError_t launch_sm_copy(const SmCopyParams& params, unsigned blocks, unsigned threads,
                           cudaStream_t stream);

// The same launch as a kernel node of `graph`, and a new `params` for that node of an
// instantiated graph (the parameters are copied by both calls).
cudaError_t add_sm_copy_node(cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                             size_t dependency_count, const SmCopyParams& params, unsigned blocks,
                             unsigned threads, cudaGraphNode_t* node);
cudaError_t set_sm_copy_node(cudaGraphExec_t exec, cudaGraphNode_t node, const SmCopyParams& params,
                             unsigned blocks, unsigned threads);

// ---- the resident kernel (TCA_PATH_CUDA_RESIDENT) ----
// One block that stays on the GPU and serves host kicks without a launch: the host writes a
// kick into the next slot of a ring in host-mapped memory and the kernel, polling that slot,
// runs the chain's phases (SmCopyParams in device memory, ended by one whose piece_count is 0)
// with the kick's notification values. Every word of a slot carries the kick's sequence number
// (its low 16 bits) above 48 bits of payload, so each word shows by itself whether it is the
// kick's and the kernel may read them in any order, several in one load.
constexpr uint32_t kResidentSlots = 64;
constexpr unsigned kResidentSequenceShift = 48;
constexpr uint64_t kResidentPayloadMask = (uint64_t{1} << kResidentSequenceShift) - 1;
constexpr uint64_t kResidentCountMask = 0xf;  // the tag's low bits: the number of values
struct alignas(16) ResidentSlot {
  uint64_t tag;  // payload: the phases' address (16-byte aligned; null: leave) | the count
  uint64_t values[kInlineNotifyValues];  // payload: a notification value
};
// Leaving is a Dekker handshake with the host's kick: the kernel sets `leaving`, fences, and
// looks at the next slot once more; the host writes the slot, fences, and looks at `leaving`.
// So either the kernel sees the kick, or the host sees it leave (and launches a new one).
struct ResidentRing {
  uint64_t completed;  // kernel: kicks served, each released after its stores and notifications
  uint32_t leaving;    // kernel: 1 once it has decided to end (the host resets it at launch)
  uint32_t reserved;
  ResidentSlot slots[kResidentSlots];  // kick s (from 1) in slot (s - 1) % kResidentSlots
};

// Starts the resident kernel; `served` kicks are done, it leaves after `idle_ns` without one.
cudaError_t launch_resident_server(ResidentRing* ring, uint64_t served, uint64_t idle_ns,
                                   cudaStream_t stream);

// Adds to `graph` a kernel node that raises `count` notifications in order.
cudaError_t add_notify_node(cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                            size_t dependency_count, const NotifyTarget* targets, uint32_t count,
                            cudaGraphNode_t* node);

// The stream waits until `*cell` reaches the next count of `*consumed` (counted on the GPU, so
// that a captured graph consumes one notification per replay). After `timeout_ns` it gives up
// and sets `*timed_out`.
cudaError_t launch_notification_wait(const uint64_t* cell, uint64_t* consumed, uint64_t timeout_ns,
                                     unsigned int* timed_out, cudaStream_t stream);

}  // namespace tca
