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

// Adds to `graph` a kernel node that raises `count` notifications in order.
cudaError_t add_notify_node(cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                            size_t dependency_count, const NotifyTarget* targets, uint32_t count,
                            cudaGraphNode_t* node);

// The stream waits until `*cell` reaches the next count of `*consumed` (counted on the GPU, so
// that a captured graph consumes one notification per replay). After `timeout_ns` it gives up
// and sets `*timed_out`.
cudaError_t launch_notification_wait(const uint64_t* cell, uint64_t* consumed,
                                     uint64_t timeout_ns, unsigned int* timed_out,
                                     cudaStream_t stream);

}  // namespace tca
