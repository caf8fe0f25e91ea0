// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include <cuda_runtime.h>

#include <algorithm>
#include <cuda/atomic>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "early_launch.cuh"
#include "gpu_kernels.cuh"
#include "slab_format.h"
#include "slab_load.cuh"
#include "tca_push.cuh"

namespace tca_cg {
namespace {

// How the launches below go: early (set_early_launch), and whether they take stamp slots
// (set_kernel_stamps) and which kernel took each.
struct LaunchSettings {
  bool early = false;
  KernelSlot* slots = nullptr;
  int capacity = 0;
  std::vector<const char*> names;
};
LaunchSettings settings;

KernelStamp next_stamp(const char* name) {
  if (settings.slots == nullptr || static_cast<int>(settings.names.size()) >= settings.capacity)
    return KernelStamp{nullptr};
  settings.names.push_back(name);
  return KernelStamp{settings.slots + settings.names.size() - 1};
}

// The first step of every kernel here: wait for the kernel before it in the stream to end (a
// no-op where it was not launched early), then let the next one launch; the block's start of
// work goes to the stamp. Only reads of data no kernel writes (the matrix) may come before it.
__device__ __forceinline__ void begin_kernel(KernelStamp stamp) {
  tca_apps::begin_dependent_kernel();
  if (stamp.slot != nullptr && threadIdx.x == 0)
    atomicMin(&stamp.slot->begin, push_device::global_time_ns());
}

// The last step of every kernel here: the block's end goes to the stamp.
__device__ __forceinline__ void end_kernel(KernelStamp stamp) {
  if (stamp.slot != nullptr && threadIdx.x == 0)
    atomicMax(&stamp.slot->end, push_device::global_time_ns());
}

// After a wait for the peers that began at `since`: the longest such wait of a block.
__device__ __forceinline__ void peers_waited(KernelStamp stamp, unsigned long long since) {
  if (stamp.slot != nullptr && threadIdx.x == 0)
    atomicMax(&stamp.slot->peer_wait, push_device::global_time_ns() - since);
}

// Called by every thread of a block at its end: block 0's first warp collects the posted pair.
__device__ __forceinline__ void collect_posted_pair(const PairCollect& pair) {
  if (pair.plan == nullptr || blockIdx.x != 0 || threadIdx.x >= 32) return;
  double sum[2];
  push_device::collect_pair(*pair.plan, sum);
  if (threadIdx.x == 0) {
    pair.global[0] = sum[0];
    pair.global[1] = sum[1];
  }
}

// Launches `kernel` (whose last parameter is its KernelStamp) on `stream`, early
// (set_early_launch) or after the previous kernel's end.
template <typename... Params, typename... Args>
void launch(const char* name, void (*kernel)(Params...), int blocks, int threads, size_t shared,
            cudaStream_t stream, Args&&... args) {
  const tca_apps::LaunchConfig config(blocks, threads, shared, stream, settings.early);
  const cudaError_t error =
      cudaLaunchKernelEx(config.get(), kernel, std::forward<Args>(args)..., next_stamp(name));
  if (error != cudaSuccess)
    throw std::runtime_error(std::string("launch of ") + name + ": " + cudaGetErrorString(error) +
                             (settings.early ? " (--no-early-launch starts kernels in turn)" : ""));
}

__device__ __forceinline__ double warp_sum(double value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}

// The block's sums of every thread's `values`, valid in thread 0: all of them in one pass (one
// exchange through shared memory, two barriers, whatever the width).
template <int kThreads, int kWidth>
__device__ __forceinline__ void block_sums(double (&values)[kWidth]) {
  __shared__ double shared[kWidth][kThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int w = 0; w < kWidth; ++w) values[w] = warp_sum(values[w]);
  if (lane == 0) {
#pragma unroll
    for (int w = 0; w < kWidth; ++w) shared[w][warp] = values[w];
  }
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int w = 0; w < kWidth; ++w)
      values[w] = warp_sum(lane < kThreads / 32 ? shared[w][lane] : 0.0);
  }
  __syncthreads();
}

// Every thread passes its values; the block's sums become partials, and the last block adds
// the partials of all blocks in block order into sum.out. Returns true in the last block (once
// every block's arrival, which releases what each read before it, has been acquired).
template <int kThreads, int kWidth>
__device__ bool finish_sums(const double (&values)[kWidth], SumTarget sum, KernelStamp stamp) {
  __shared__ bool last;
  __shared__ double sums[kWidth];
  double totals[kWidth];
#pragma unroll
  for (int w = 0; w < kWidth; ++w) totals[w] = values[w];
  block_sums<kThreads, kWidth>(totals);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int w = 0; w < kWidth; ++w) sum.partials[blockIdx.x * kWidth + w] = totals[w];
    // One acq_rel arrival: it releases this block's partials and, in the last block, acquires
    // every other block's (the barrier below passes them to its threads). In place of a fence
    // on each side of a relaxed add, it made class C's slab sum 0.3-0.6 us faster on H100s.
    last = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*sum.counter)
               .fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return false;
  double parts[kWidth] = {};
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) {
#pragma unroll
    for (int w = 0; w < kWidth; ++w) parts[w] += __ldcg(sum.partials + b * kWidth + w);
  }
  block_sums<kThreads, kWidth>(parts);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int w = 0; w < kWidth; ++w) {
      sum.out[w] = parts[w];
      sums[w] = parts[w];
    }
    *sum.counter = 0;
  }
  if (sum.reduce != nullptr) {
    __syncthreads();
    const unsigned long long since = push_device::global_time_ns();
    if (threadIdx.x < 32)
      push_device::mailbox_allreduce_warp(*sum.reduce, sums, sum.global, kWidth);
    peers_waited(stamp, since);
  }
  return true;
}

// The sums of a kernel that forms `kDots` of (y.p, p.p): none, the first, or both.
template <int kDots>
__device__ __forceinline__ void finish_dots(double yp, double pp, SumTarget sum,
                                            KernelStamp stamp) {
  if constexpr (kDots == 1) {
    const double values[1] = {yp};
    finish_sums<kVectorThreads, 1>(values, sum, stamp);
  } else if constexpr (kDots == 2) {
    const double values[2] = {yp, pp};
    finish_sums<kVectorThreads, 2>(values, sum, stamp);
  }
}

// One warp per row (rows strided over the grid's warps); each lane takes every 32nd entry,
// four at a time so that each warp keeps 1.5 KiB of the matrix in flight. The matrix is read
// once (streaming loads), x through the read-only cache.
template <bool kDot>
__global__ void __launch_bounds__(kSpmvThreads)
    spmv_kernel(SpmvArgs a, SumTarget sum, KernelStamp stamp) {
  begin_kernel(stamp);
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kSpmvThreads / 32);
  double dot = 0.0;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (kSpmvThreads / 32) + threadIdx.x / 32;
       row < a.rows; row += warps) {
    const int64_t end = a.row_ptr[row + 1];
    int64_t k = a.row_ptr[row] + lane;
    double s = 0.0;
    for (; k + 96 < end; k += 128) {
      const int32_t c0 = __ldcs(a.col + k), c1 = __ldcs(a.col + k + 32);
      const int32_t c2 = __ldcs(a.col + k + 64), c3 = __ldcs(a.col + k + 96);
      const double v0 = __ldcs(a.val + k), v1 = __ldcs(a.val + k + 32);
      const double v2 = __ldcs(a.val + k + 64), v3 = __ldcs(a.val + k + 96);
      s += v0 * __ldg(a.x + c0);
      s += v1 * __ldg(a.x + c1);
      s += v2 * __ldg(a.x + c2);
      s += v3 * __ldg(a.x + c3);
    }
    for (; k < end; k += 32) s += __ldcs(a.val + k) * __ldg(a.x + __ldcs(a.col + k));
    s = warp_sum(s);
    if (lane == 0) {
      a.y[row] = s;
      if (kDot) dot += s * a.p_own[row];
    }
  }
  if (kDot) {
    const double values[1] = {dot};
    finish_sums<kSpmvThreads, 1>(values, sum, stamp);
  }
  end_kernel(stamp);
}

// The slab kernels below hold no static __shared__ variable (nor call a function that does): an
// unused 816-byte array, which also moves their dynamic shared memory (the slab of x) off the
// start of shared memory, made the row-group kernel 17-50% slower on an H200, why is not known
// (docs/CG.md).
//
// Rows are handed out in rounds (round r: row r0 + r*groups + group) so that every lane of a
// warp runs the same number of rounds and meets the shuffles. A group of kLanes threads loads a
// row's first kUnroll * kLanes entries at once (the rest of a longer row follows in further
// batches), in pairs (the format pads each row's part of a slab to whole, aligned pairs): one
// 16-byte load of values and one 4-byte load of columns for two entries; the slots past the
// row's end count as zero. With kPrefetch the group issues the next row's first batch
// before it sums the current one, so two rows per group are in flight. The first batch is
// loaded before the barrier, while the block fills its slab of x. Row offsets are read two rows
// ahead.
//
// Held to kSlabRowRegisters registers a thread (the compiler gives it 64, the most 1,024 threads
// may have), so that the SM keeps room for a block of the kernel launched early after it.
// Measured on one H200 (docs/CG.md): class B's block of 4 GPUs 15.6 -> 13.4 us a call, other
// blocks of classes B and C within 1%; 48 registers slowed the larger blocks by 3%.
inline constexpr int kSlabRowRegisters = 56;
static_assert(kSlabRowRegisters * kSlabThreads <= 65536, "a block must fit the register file");
template <int kLanes, int kUnroll, bool kPrefetch>
__global__ void __maxnreg__(kSlabRowRegisters) spmv_slab_kernel(SlabArgs a, KernelStamp stamp) {
  extern __shared__ double xs[];
  const int slab = blockIdx.x % a.slabs;
  const int chunk = blockIdx.x / a.slabs;
  const int chunks = gridDim.x / a.slabs;
  const int64_t r0 = a.rows * chunk / chunks, r1 = a.rows * (chunk + 1) / chunks;
  constexpr int kGroups = kSlabThreads / kLanes;
  const int group = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const uint32_t* rp = a.row_ptr + static_cast<int64_t>(slab) * (a.rows + 1);
  const int64_t base = a.slab_base[slab];
  const uint16_t* col = a.col + base;
  const double* val = a.val + base;
  double* out = a.partial + static_cast<int64_t>(slab) * a.rows;
  const int64_t rounds = (r1 - r0 + kGroups - 1) / kGroups;

  auto offsets = [&](int64_t row, uint32_t& begin, uint32_t& end) {
    begin = 0;
    end = 0;
    if (row < r1) {
      begin = __ldg(rp + row);
      end = __ldg(rp + row + 1);
    }
  };
  static_assert(kUnroll % 2 == 0, "entries are loaded in pairs");
  const double2* val_pairs = reinterpret_cast<const double2*>(val);
  const uint32_t* col_pairs = reinterpret_cast<const uint32_t*>(col);
  // The pairs first_pair + j * kLanes of a row whose pairs end at end_pair (pair q: slots 2q
  // and 2q + 1).
  auto load = [&](uint32_t first_pair, uint32_t end_pair, double(&v)[kUnroll],
                  uint32_t(&c)[kUnroll]) {
#pragma unroll
    for (int j = 0; j < kUnroll / 2; ++j) {
      const uint32_t q = first_pair + j * kLanes;
      double2 pv = make_double2(0.0, 0.0);
      uint32_t pc = 0;
      if (q < end_pair) {
        pv = __ldcs(val_pairs + q);
        pc = __ldcs(col_pairs + q);
      }
      v[2 * j] = pv.x;
      v[2 * j + 1] = pv.y;
      c[2 * j] = pc & 0xffffu;
      c[2 * j + 1] = pc >> 16;
    }
  };

  int64_t row = r0 + group;
  uint32_t begin, end, next_begin, next_end;
  offsets(row, begin, end);
  offsets(row + kGroups, next_begin, next_end);
  double v[kUnroll];
  uint32_t c[kUnroll];
  load(begin / 2 + lane, end / 2, v, c);

  const int64_t first_col = static_cast<int64_t>(slab) * a.width;
  const int width = static_cast<int>(min(static_cast<int64_t>(a.width), a.cols - first_col));
  uint64_t* barrier = slab_barrier(xs, a.width);
  init_slab_barrier(barrier);
  begin_kernel(stamp);  // the loads above read only the matrix
  const unsigned long long since = push_device::global_time_ns();
  push_device::wait_for_p(a.wait);  // while the first rows' entries are on their way
  peers_waited(stamp, since);
  __syncthreads();  // the barrier's set-up
  uint32_t phase = 0;
  load_slab(xs, a.x + first_col, width, barrier, phase);

  for (int64_t round = 0; round < rounds; ++round) {
    uint32_t after_begin, after_end;
    offsets(row + 2 * kGroups, after_begin, after_end);
    double vn[kUnroll];
    uint32_t cn[kUnroll];
    if (kPrefetch) load(next_begin / 2 + lane, next_end / 2, vn, cn);
    double s = 0.0;
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) s += v[j] * xs[c[j]];
    constexpr uint32_t kBatchPairs = kUnroll / 2 * kLanes;
    for (uint32_t q = begin / 2 + lane + kBatchPairs; q < end / 2; q += kBatchPairs) {
      double w[kUnroll];
      uint32_t d[kUnroll];
      load(q, end / 2, w, d);
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) s += w[j] * xs[d[j]];
    }
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2)
      s += __shfl_down_sync(0xffffffffu, s, offset, kLanes);
    if (lane == 0 && row < r1) out[row] = s;
    row += kGroups;
    begin = next_begin;
    end = next_end;
    next_begin = after_begin;
    next_end = after_end;
    if (kPrefetch) {
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        v[j] = vn[j];
        c[j] = cn[j];
      }
    } else {
      load(begin / 2 + lane, end / 2, v, c);
    }
  }
  collect_posted_pair(a.pair);
  end_kernel(stamp);
}

// A warp's tile (slab_format.h): lane l holds entries 8l..8l+7 of the tile and their
// row-start bits; a prefix count of the bits over the lanes gives each entry's row. The lane
// sums its entries row by row (rows strictly inside its 8 entries are written at once), then
// a segmented scan over the lanes, keyed by each lane's last row, completes the rows that
// cross lanes: the lane that holds a row's last entry writes it. The same arithmetic, in the
// same order, as tiled_slabs_multiply.
//
// With kScatter (the symmetric kernel: the tile holds entries of the upper triangle), each
// entry a(i, j) off the diagonal also adds a(i, j) x(i) into the slab's column sums `ys`
// (shared memory, j local to the slab, whose first column is `first_col`).
template <bool kScatter>
__device__ __forceinline__ void spmv_tile(const TileArgs& a, int64_t tile, const double* xs,
                                          double* out, int lane, double* ys = nullptr,
                                          int64_t first_col = 0) {
  const size_t base = static_cast<size_t>(tile) * kTileEntries;
  const double2* values = reinterpret_cast<const double2*>(a.val + base);
  const double2 v0 = __ldcs(values + lane), v1 = __ldcs(values + kTileLanes + lane);
  const double2 v2 = __ldcs(values + 2 * kTileLanes + lane),
                v3 = __ldcs(values + 3 * kTileLanes + lane);
  const uint4 c = __ldcs(reinterpret_cast<const uint4*>(a.col + base) + lane);
  const unsigned bits = __ldcs(a.starts + static_cast<size_t>(tile) * kTileLanes + lane);
  const int64_t row0 = __ldg(a.tile_row + tile);
  const int count = __popc(bits);
  int through = count;  // row starts in this lane and the lanes before
#pragma unroll
  for (int d = 1; d < kTileLanes; d *= 2) {
    const int other = __shfl_up_sync(0xffffffffu, through, d);
    if (lane >= d) through += other;
  }
  const int before = through - count;
  const double val[kTileLaneEntries] = {v0.x, v0.y, v1.x, v1.y, v2.x, v2.y, v3.x, v3.y};
  const unsigned cols[kTileLaneEntries / 2] = {c.x, c.y, c.z, c.w};
  int off[kTileLaneEntries];
  double product[kTileLaneEntries];
#pragma unroll
  for (int j = 0; j < kTileLaneEntries; ++j) {
    off[j] = before + __popc(bits & ((2u << j) - 1u)) - 1;
    product[j] = val[j] * xs[(cols[j / 2] >> (16 * (j % 2))) & 0xffffu];
  }
  if constexpr (kScatter) {
#pragma unroll
    for (int j = 0; j < kTileLaneEntries; ++j) {
      const unsigned c = (cols[j / 2] >> (16 * (j % 2))) & 0xffffu;
      const int64_t row = row0 + off[j];
      if (first_col + c != row) atomicAdd(ys + c, val[j] * __ldg(a.x + row));
    }
  }
  const int head = off[0], tail = off[kTileLaneEntries - 1];
  int current = head;
  double sum = 0.0, first_sum = 0.0;
#pragma unroll
  for (int j = 0; j < kTileLaneEntries; ++j) {
    if (off[j] != current) {
      if (current == head) {
        first_sum = sum;
      } else {
        out[row0 + current] = sum;
      }
      current = off[j];
      sum = 0.0;
    }
    sum += product[j];
  }
  const double head_sum = head == tail ? sum : first_sum;
  const double tail_sum = sum;
  double scan = tail_sum;
#pragma unroll
  for (int d = 1; d < kTileLanes; d *= 2) {
    const double other = __shfl_up_sync(0xffffffffu, scan, d);
    const int other_tail = __shfl_up_sync(0xffffffffu, tail, d);
    if (lane >= d && other_tail == tail) scan = scan + other;
  }
  const double previous_scan = __shfl_up_sync(0xffffffffu, scan, 1);
  const int previous_tail = __shfl_up_sync(0xffffffffu, tail, 1);
  const int next_head = __shfl_down_sync(0xffffffffu, head, 1);
  const bool tail_ends = lane == kTileLanes - 1 || next_head != tail;
  if (head != tail) {
    const double carry = lane > 0 && previous_tail == head ? previous_scan : 0.0;
    out[row0 + head] = head_sum + carry;
    if (tail_ends) out[row0 + tail] = tail_sum;
  } else if (tail_ends) {
    out[row0 + tail] = scan;
  }
}

// Block b's share of all slabs' tiles, [tiles * b / G, tiles * (b + 1) / G), in order: for each
// slab the share meets, `before_load(width)`, the slab's x into shared memory (which ends with
// a barrier), then `segment(slab, first_col, width, first_tile, end_tile)`. Every thread calls
// it; a barrier comes before each slab's load, after the previous segment.
template <typename BeforeLoad, typename Segment>
__device__ __forceinline__ void for_each_tile_segment(const TileArgs& a, double* xs,
                                                      BeforeLoad&& before_load, Segment&& segment) {
  uint64_t* barrier = slab_barrier(xs, a.width);
  init_slab_barrier(barrier);
  uint32_t phase = 0;
  const int64_t end = a.tiles * (blockIdx.x + 1) / gridDim.x;
  int slab = 0;
  for (int64_t t = a.tiles * blockIdx.x / gridDim.x; t < end;) {
    while (__ldg(a.slab_tiles + slab + 1) <= t) ++slab;
    const int64_t segment_end = min(end, __ldg(a.slab_tiles + slab + 1));
    const int64_t first_col = static_cast<int64_t>(slab) * a.width;
    const int width = static_cast<int>(min(static_cast<int64_t>(a.width), a.cols - first_col));
    __syncthreads();  // the previous segment's shared memory is no longer read (barrier set up)
    before_load(width);
    load_slab(xs, a.x + first_col, width, barrier, phase);
    segment(slab, first_col, width, t, segment_end);
    t = segment_end;
  }
}

// The tile kernel: each block its share of the tiles (for_each_tile_segment), a warp a tile.
__global__ void __launch_bounds__(kSlabThreads, 1) spmv_tile_kernel(TileArgs a, KernelStamp stamp) {
  begin_kernel(stamp);
  extern __shared__ double xs[];
  constexpr int kWarps = kSlabThreads / kTileLanes;
  const int lane = threadIdx.x % kTileLanes, warp = threadIdx.x / kTileLanes;
  const unsigned long long since = push_device::global_time_ns();
  push_device::wait_for_p(a.wait);
  peers_waited(stamp, since);
  for_each_tile_segment(
      a, xs, [](int) {},
      [&](int slab, int64_t, int, int64_t first, int64_t last) {
        double* out = a.partial + static_cast<int64_t>(slab) * a.rows;
        for (int64_t tile = first + warp; tile < last; tile += kWarps)
          spmv_tile<false>(a, tile, xs, out, lane);
      });
  collect_posted_pair(a.pair);
  end_kernel(stamp);
}

// A row's terms of the `kDots` of (y.p, p.p) a sum of partials forms: none, the first, or both.
template <int kDots>
__device__ __forceinline__ void add_dots(double y, const double* p_own, int64_t row, double& yp,
                                         double& pp) {
  if constexpr (kDots > 0) {
    const double p = p_own[row];
    yp += y * p;
    if constexpr (kDots > 1) pp += p * p;
  }
}

// The symmetric tile kernel (symmetric_tiles.h): as the tile kernel on the upper triangle, and
// per segment the slab's column sums, added in shared memory after x's slab, stored once.
__global__ void __launch_bounds__(kSlabThreads, 1)
    spmv_symmetric_tile_kernel(SymmetricTileArgs s, KernelStamp stamp) {
  begin_kernel(stamp);
  extern __shared__ double xs[];
  const TileArgs& a = s.tiles;
  constexpr int kWarps = kSlabThreads / kTileLanes;
  const int lane = threadIdx.x % kTileLanes, warp = threadIdx.x / kTileLanes;
  double* ys = xs + a.width + 1;  // after the barrier's word
  for_each_tile_segment(
      a, xs,
      [&](int width) {
        for (int i = threadIdx.x; i < width; i += blockDim.x) ys[i] = 0.0;
      },
      [&](int slab, int64_t first_col, int width, int64_t first, int64_t last) {
        double* out = a.partial + static_cast<int64_t>(slab) * a.rows;
        for (int64_t tile = first + warp; tile < last; tile += kWarps)
          spmv_tile<true>(a, tile, xs, out, lane, ys, first_col);
        __syncthreads();
        double* sums =
            s.sums + (__ldg(s.first_segment + slab) + blockIdx.x - __ldg(s.first_block + slab)) *
                         static_cast<int64_t>(a.width);
        for (int i = threadIdx.x; i < width; i += blockDim.x) sums[i] = ys[i];
      });
  end_kernel(stamp);
}

// y(i) = the row sums of the slabs from i's own on, and the column sums of i's slab's segments.
template <int kDots>
__global__ void __launch_bounds__(kVectorThreads)
    symmetric_sum_kernel(SymmetricTileArgs s, double* y, const double* p_own, SumTarget sum,
                         KernelStamp stamp) {
  begin_kernel(stamp);
  const int64_t rows = s.tiles.rows, width = s.tiles.width;
  double yp = 0.0, pp = 0.0;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int own = static_cast<int>(row / width);
    double v = 0.0;
    for (int k = own; k < s.tiles.slabs; ++k) v += s.tiles.partial[k * rows + row];
    const int64_t last = s.first_segment[own + 1];
    for (int64_t g = s.first_segment[own]; g < last; ++g)
      v += s.sums[g * width + row - own * width];
    y[row] = v;
    add_dots<kDots>(v, p_own, row, yp, pp);
  }
  finish_dots<kDots>(yp, pp, sum, stamp);
  end_kernel(stamp);
}

template <int kDots>
__global__ void __launch_bounds__(kVectorThreads)
    slab_sum_kernel(const double* partial, int slabs, int64_t rows, double* y, const double* p_own,
                    SumTarget sum, KernelStamp stamp) {
  begin_kernel(stamp);
  double yp = 0.0, pp = 0.0;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double s = 0.0;
    for (int k = 0; k < slabs; ++k) s += partial[k * rows + row];
    y[row] = s;
    add_dots<kDots>(s, p_own, row, yp, pp);
  }
  finish_dots<kDots>(yp, pp, sum, stamp);
  end_kernel(stamp);
}

__device__ __forceinline__ int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// The slab sum of 2d with the row reduction's push fused (PieceFusion): piece by piece, each
// row's sum goes to y and, for another rank's piece, into that rank's scratch; the last block
// raises the receivers' cells.
__global__ void __launch_bounds__(kVectorThreads)
    slab_sum_push_kernel(const double* partial, int slabs, int64_t rows, double* y,
                         PieceFusion fusion, KernelStamp stamp) {
  begin_kernel(stamp);
  for (int k = 0; k < fusion.pieces; ++k) {
    double* remote = fusion.dst[k];
    const int64_t first_row = k * fusion.piece;
    for (int64_t i = first_index(); i < fusion.piece; i += grid_stride()) {
      const int64_t row = first_row + i;
      double s = 0.0;
      if (row < rows) {
        for (int slab = 0; slab < slabs; ++slab) s += partial[slab * rows + row];
        y[row] = s;
      }
      if (remote != nullptr) remote[i] = s;
    }
  }
  push_device::finish_push(fusion.puts, fusion.signal, fusion.blocks_done, fusion.pushes);
  end_kernel(stamp);
}

__global__ void fill_kernel(double* v, int64_t n, int64_t real, double value, KernelStamp stamp) {
  begin_kernel(stamp);
  for (int64_t i = first_index(); i < n; i += grid_stride()) v[i] = i < real ? value : 0.0;
  end_kernel(stamp);
}

template <bool kDot>
__global__ void __launch_bounds__(kVectorThreads)
    cg_begin_kernel(const double* x, double* z, double* r, double* p, int64_t n, double* previous,
                    SumTarget sum, KernelStamp stamp) {
  begin_kernel(stamp);
  if (first_index() == 0) {
    previous[0] = 0.0;  // rho and alpha of the step before: none yet
    previous[1] = 0.0;
  }
  double rr = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double value = x[i];
    z[i] = 0.0;
    r[i] = value;
    p[i] = value;
    if (kDot) rr += value * value;
  }
  if (kDot) {
    const double values[1] = {rr};
    finish_sums<kVectorThreads, 1>(values, sum, stamp);
  }
  end_kernel(stamp);
}

__global__ void __launch_bounds__(kVectorThreads)
    dot_kernel(const double* a, const double* b, int64_t n, SumTarget sum, KernelStamp stamp) {
  begin_kernel(stamp);
  double s = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) s += a[i] * b[i];
  const double values[1] = {s};
  finish_sums<kVectorThreads, 1>(values, sum, stamp);
  end_kernel(stamp);
}

// out[0] = p.q, out[1] = p.p
__global__ void __launch_bounds__(kVectorThreads)
    dot_pair_kernel(const double* p, const double* q, int64_t n, SumTarget sum, KernelStamp stamp) {
  begin_kernel(stamp);
  double pq = 0.0, pp = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double pi = p[i];
    pq += pi * q[i];
    pp += pi * pi;
  }
  finish_dots<2>(pq, pp, sum, stamp);
  end_kernel(stamp);
}

template <bool kDot>
__global__ void __launch_bounds__(kVectorThreads)
    update_zr_kernel(StepScalars scalars, double* z, double* r, const double* p, const double* q,
                     int64_t n, SumTarget sum, KernelStamp stamp) {
  begin_kernel(stamp);
  const double rho = *scalars.rho;
  const double alpha = rho / *scalars.dot;
  if (first_index() == 0) *scalars.rho_previous = rho;
  double rr = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    z[i] = z[i] + alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    if (kDot) rr += ri * ri;
  }
  if (kDot) {
    const double values[1] = {rr};
    finish_sums<kVectorThreads, 1>(values, sum, stamp);
  }
  end_kernel(stamp);
}

__global__ void update_p_kernel(StepScalars scalars, const double* r, double* p, int64_t n,
                                KernelStamp stamp) {
  begin_kernel(stamp);
  const double beta = *scalars.rho / *scalars.rho_previous;
  for (int64_t i = first_index(); i < n; i += grid_stride()) p[i] = r[i] + beta * p[i];
  end_kernel(stamp);
}

// Single-reduction CG's coefficients (engine.h, update_single), read by thread 0 of every block
// as the block starts; the step's gamma and alpha become the "previous" ones only once every
// block has read them (keep_coefficients, at the blocks' end: an arrival at the start cost each
// block a fence and an atomic's round trip before its first element).
struct SingleCoefficients {
  double alpha;
  double beta;
  double gamma;
  bool first;
};
__device__ SingleCoefficients coefficients_of(double gamma, double delta,
                                              const StepScalars& scalars) {
  const double previous = *scalars.rho_previous;
  SingleCoefficients c;
  c.first = previous == 0.0;
  c.beta = c.first ? 0.0 : gamma / previous;
  c.alpha = c.first ? gamma / delta : gamma / (delta - c.beta * gamma / *scalars.alpha_previous);
  if (gamma == 0.0) c.alpha = c.beta = 0.0;  // r = 0: solved exactly (0 / 0 would be NaN)
  c.gamma = gamma;
  return c;
}
__device__ SingleCoefficients single_coefficients(StepScalars scalars) {
  __shared__ SingleCoefficients shared;
  if (threadIdx.x == 0) shared = coefficients_of(*scalars.rho, *scalars.dot, scalars);
  __syncthreads();
  return shared;
}
// By thread 0 of the grid's last block to end, once every block has read the previous values:
// this step's become the previous ones.
__device__ __forceinline__ void keep_coefficients(const StepScalars& scalars,
                                                  const SingleCoefficients& c) {
  *scalars.rho_previous = c.gamma;
  *scalars.alpha_previous = c.alpha;
}

// Without a push, the blocks' arrival at their end on `counter` (0 between launches): an
// acq_rel atomic releases thread 0's reads of the previous values, and the last block's
// acquires every other block's before it overwrites them.
__device__ __forceinline__ void arrive_and_keep(const StepScalars& scalars,
                                                const SingleCoefficients& c, unsigned* counter) {
  if (threadIdx.x != 0) return;
  if (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*counter).fetch_add(
          1u, cuda::memory_order_acq_rel) == gridDim.x - 1) {
    keep_coefficients(scalars, c);
    *counter = 0;
  }
}

// Single-reduction CG's update of element i: d, s, z and r (r is p, w is q); returns r's.
__device__ __forceinline__ double update_single_at(const SingleCoefficients& c, int64_t i,
                                                   double* d, double* s, double* z, double* r,
                                                   const double* w) {
  const double ri = r[i];
  const double di = c.first ? ri : ri + c.beta * d[i];
  const double si = c.first ? w[i] : w[i] + c.beta * s[i];
  d[i] = di;
  s[i] = si;
  z[i] = z[i] + c.alpha * di;
  const double next = ri - c.alpha * si;
  r[i] = next;
  return next;
}

// With a fusion (kPush), r's elements also go into every peer's p_full (16-byte stores where
// every end allows) and the last block raises the peers' cells.
template <bool kPush>
__global__ void __launch_bounds__(kVectorThreads)
    update_single_kernel(StepScalars scalars, unsigned* counter, double* d, double* s, double* z,
                         double* r, const double* w, int64_t n, PushFusion fusion,
                         KernelStamp stamp) {
  begin_kernel(stamp);
  const SingleCoefficients c = single_coefficients(scalars);
  uintptr_t ends = 0;
  for (int k = 0; k < fusion.peers; ++k) ends |= reinterpret_cast<uintptr_t>(fusion.dst[k]);
  int64_t done = 0;
  if (kPush && (ends & 15) == 0) {
    const int64_t pairs = n / 2;
    for (int64_t i = first_index(); i < pairs; i += grid_stride()) {
      const double2 value = make_double2(update_single_at(c, 2 * i, d, s, z, r, w),
                                         update_single_at(c, 2 * i + 1, d, s, z, r, w));
      for (int k = 0; k < fusion.peers; ++k) reinterpret_cast<double2*>(fusion.dst[k])[i] = value;
    }
    done = 2 * pairs;
  }
  for (int64_t i = done + first_index(); i < n; i += grid_stride()) {
    const double value = update_single_at(c, i, d, s, z, r, w);
    if (kPush) {
      for (int k = 0; k < fusion.peers; ++k) fusion.dst[k][i] = value;
    }
  }
  // With a push, its arrival (which releases each block's reads) serves the coefficients too.
  if (kPush &&
      push_device::finish_push(fusion.peers, fusion.signal, fusion.blocks_done, fusion.pushes)) {
    if (threadIdx.x == 0) keep_coefficients(scalars, c);
  } else if (!kPush) {
    arrive_and_keep(scalars, c, counter);
  }
  end_kernel(stamp);
}

// Element i of pipelined CG's update with q's element given: u, s, d, z and r updated in place;
// returns w's new element (the caller stores it) and r's in `r_new`.
__device__ __forceinline__ double pipelined_element(const SingleCoefficients& c,
                                                    const PipelinedVectors& v, int64_t i, double q,
                                                    double& r_new) {
  const double u = q + c.beta * v.u[i];
  const double s = v.w[i] + c.beta * v.s[i];
  const double d = v.r[i] + c.beta * v.d[i];
  const double r = v.r[i] - c.alpha * s;
  const double w = v.w[i] - c.alpha * u;
  v.u[i] = u;
  v.s[i] = s;
  v.d[i] = d;
  v.z[i] = v.z[i] + c.alpha * d;
  v.r[i] = r;
  r_new = r;
  return w;
}

// Pipelined CG's update (engine.h, update_pipelined): p holds w; with kDot the pair of the new
// w.r and r.r, whose arrival also serves the coefficients.
template <bool kDot>
__global__ void __launch_bounds__(kVectorThreads)
    update_pipelined_kernel(StepScalars scalars, unsigned* counter, PipelinedVectors v, int64_t n,
                            SumTarget sum, KernelStamp stamp) {
  begin_kernel(stamp);
  const SingleCoefficients c = single_coefficients(scalars);
  double wr = 0.0, rr = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    double r;
    const double w = pipelined_element(c, v, i, v.q[i], r);
    v.w[i] = w;
    if (kDot) {
      wr += w * r;
      rr += r * r;
    }
  }
  if (kDot) {
    const double values[2] = {wr, rr};
    if (finish_sums<kVectorThreads, 2>(values, sum, stamp) && threadIdx.x == 0)
      keep_coefficients(scalars, c);
  } else {
    arrive_and_keep(scalars, c, counter);
  }
  end_kernel(stamp);
}

// Pipelined CG's update of element i with q's element summed from the slab partials; w's new
// element goes to w_next (and is returned), the pair's terms to wr and rr.
__device__ __forceinline__ double update_overlapped_at(const SingleCoefficients& c, int64_t i,
                                                       const PipelinedOverlap& o, double& wr,
                                                       double& rr) {
  double q = 0.0;
  if (i < o.rows) {
    for (int k = 0; k < o.slabs; ++k) q += o.partial[k * o.rows + i];
  }
  double r;
  const double w = pipelined_element(c, o.v, i, q, r);
  o.w_next[i] = w;
  wr += w * r;
  rr += r * r;
  return w;
}

// Pipelined CG's update with the pair posted (engine.h, update_pipelined_overlapped): the
// coefficients from the pair the previous update posted (collected by the SpMV between them into
// the global scalars), w's new elements into w_next and every
// peer's copy of it (16-byte stores where every end allows); the last block raises the peers'
// cells, adds the blocks' sums of the new pair in block order and posts it. Its arrival serves
// the coefficients too.
__global__ void __launch_bounds__(kVectorThreads)
    update_pipelined_overlap_kernel(StepScalars scalars, PipelinedOverlap o, int64_t n,
                                    PushFusion fusion, KernelStamp stamp) {
  begin_kernel(stamp);
  const SingleCoefficients c = single_coefficients(scalars);  // the SpMV collected the pair
  double wr = 0.0, rr = 0.0;
  uintptr_t ends = 0;
  for (int k = 0; k < fusion.peers; ++k) ends |= reinterpret_cast<uintptr_t>(fusion.dst[k]);
  int64_t done = 0;
  if ((ends & 15) == 0) {
    const int64_t pairs = n / 2;
    for (int64_t i = first_index(); i < pairs; i += grid_stride()) {
      const double2 value = make_double2(update_overlapped_at(c, 2 * i, o, wr, rr),
                                         update_overlapped_at(c, 2 * i + 1, o, wr, rr));
      for (int k = 0; k < fusion.peers; ++k) reinterpret_cast<double2*>(fusion.dst[k])[i] = value;
    }
    done = 2 * pairs;
  }
  for (int64_t i = done + first_index(); i < n; i += grid_stride()) {
    const double value = update_overlapped_at(c, i, o, wr, rr);
    for (int k = 0; k < fusion.peers; ++k) fusion.dst[k][i] = value;
  }
  double values[2] = {wr, rr};
  block_sums<kVectorThreads, 2>(values);
  if (threadIdx.x == 0) {
    o.partials[2 * blockIdx.x] = values[0];
    o.partials[2 * blockIdx.x + 1] = values[1];
  }
  // The arrival releases each block's stores, reads and partials; the last block's
  // system-scope fence acquires them all.
  if (push_device::finish_push(fusion.peers, fusion.signal, fusion.blocks_done, fusion.pushes)) {
    __shared__ double pair[2];
    double parts[2] = {0.0, 0.0};
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kVectorThreads) {
      parts[0] += __ldcg(o.partials + 2 * b);
      parts[1] += __ldcg(o.partials + 2 * b + 1);
    }
    block_sums<kVectorThreads, 2>(parts);
    if (threadIdx.x == 0) {
      pair[0] = o.local_pair[0] = parts[0];
      pair[1] = o.local_pair[1] = parts[1];
      keep_coefficients(scalars, c);
    }
    __syncthreads();
    if (threadIdx.x < 32) push_device::post_pair(*o.pair, pair);
  }
  end_kernel(stamp);
}

// The last posted pair, collected into global[0..1] (w.r, r.r): after it every rank's update
// that posted it has ended, and with it the SpMV before that update.
__global__ void settle_pair_kernel(const ReducePlan* pair, double* global, KernelStamp stamp) {
  begin_kernel(stamp);
  double sum[2];
  push_device::collect_pair(*pair, sum);
  if (threadIdx.x == 0) {
    global[0] = sum[0];
    global[1] = sum[1];
  }
  end_kernel(stamp);
}

// Pipelined CG's start: z = 0, r = x, w = ax, u = s = d = 0, the previous values 0; with kDot
// the pair w.r and r.r.
template <bool kDot>
__global__ void __launch_bounds__(kVectorThreads)
    pipelined_begin_kernel(const double* x, const double* ax, PipelinedVectors v, int64_t n,
                           double* previous, SumTarget sum, const ReducePlan* post,
                           KernelStamp stamp) {
  begin_kernel(stamp);
  if (first_index() == 0) {
    previous[0] = 0.0;
    previous[1] = 0.0;
  }
  double wr = 0.0, rr = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const double r = x[i], w = ax[i];
    v.z[i] = 0.0;
    v.r[i] = r;
    v.w[i] = w;
    v.u[i] = v.s[i] = v.d[i] = 0.0;
    if (kDot) {
      wr += w * r;
      rr += r * r;
    }
  }
  if (kDot) {
    const double values[2] = {wr, rr};
    if (finish_sums<kVectorThreads, 2>(values, sum, stamp) && post != nullptr) {
      __syncthreads();  // thread 0's sum.out
      if (threadIdx.x < 32) push_device::post_pair(*post, sum.out);
    }
  }
  end_kernel(stamp);
}

// dst = value * src / sqrt(*divisor_square) (divisor_square null: 1).
__global__ void scaled_copy_kernel(double* dst, const double* src, double value,
                                   const double* divisor_square, int64_t n, KernelStamp stamp) {
  begin_kernel(stamp);
  const double scale = divisor_square != nullptr ? value / sqrt(*divisor_square) : value;
  for (int64_t i = first_index(); i < n; i += grid_stride()) dst[i] = scale * src[i];
  end_kernel(stamp);
}

// The same, each element also stored into every peer's p_full; the last block raises the
// peers' cells.
__global__ void __launch_bounds__(kVectorThreads)
    update_p_push_kernel(StepScalars scalars, const double* r, double* p, int64_t n,
                         PushFusion fusion, KernelStamp stamp) {
  begin_kernel(stamp);
  const double beta = *scalars.rho / *scalars.rho_previous;
  // 16-byte stores where every end allows (the peers' copies travel over the links).
  uintptr_t ends = reinterpret_cast<uintptr_t>(r) | reinterpret_cast<uintptr_t>(p);
  for (int k = 0; k < fusion.peers; ++k) ends |= reinterpret_cast<uintptr_t>(fusion.dst[k]);
  int64_t done = 0;
  if ((ends & 15) == 0) {
    const int64_t pairs = n / 2;
    for (int64_t i = first_index(); i < pairs; i += grid_stride()) {
      const double2 ri = reinterpret_cast<const double2*>(r)[i];
      const double2 pi = reinterpret_cast<const double2*>(p)[i];
      const double2 value = make_double2(ri.x + beta * pi.x, ri.y + beta * pi.y);
      reinterpret_cast<double2*>(p)[i] = value;
      for (int k = 0; k < fusion.peers; ++k) reinterpret_cast<double2*>(fusion.dst[k])[i] = value;
    }
    done = 2 * pairs;
  }
  for (int64_t i = done + first_index(); i < n; i += grid_stride()) {
    const double value = r[i] + beta * p[i];
    p[i] = value;
    for (int k = 0; k < fusion.peers; ++k) fusion.dst[k][i] = value;
  }
  push_device::finish_push(fusion.peers, fusion.signal, fusion.blocks_done, fusion.pushes);
  end_kernel(stamp);
}

__global__ void __launch_bounds__(kVectorThreads)
    distance_kernel(const double* a, const double* b, int64_t n, int64_t real, SumTarget sum,
                    KernelStamp stamp) {
  begin_kernel(stamp);
  double s = 0.0;
  for (int64_t i = first_index(); i < n && i < real; i += grid_stride()) {
    const double d = a[i] - b[i];
    s += d * d;
  }
  const double values[1] = {s};
  finish_sums<kVectorThreads, 1>(values, sum, stamp);
  end_kernel(stamp);
}

__global__ void __launch_bounds__(kVectorThreads)
    distance_to_kernel(const double* a, double value, int64_t n, int64_t real, SumTarget sum,
                       KernelStamp stamp) {
  begin_kernel(stamp);
  double s = 0.0;
  for (int64_t i = first_index(); i < n && i < real; i += grid_stride()) {
    const double d = a[i] - value;
    s += d * d;
  }
  const double values[1] = {s};
  finish_sums<kVectorThreads, 1>(values, sum, stamp);
  end_kernel(stamp);
}

__global__ void __launch_bounds__(kVectorThreads)
    norms_kernel(const double* x, const double* z, int64_t n, SumTarget sum, KernelStamp stamp) {
  begin_kernel(stamp);
  double xz = 0.0, zz = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    xz += x[i] * z[i];
    zz += z[i] * z[i];
  }
  const double values[2] = {xz, zz};
  finish_sums<kVectorThreads, 2>(values, sum, stamp);
  end_kernel(stamp);
}

__global__ void scale_kernel(double* x, const double* z, const double* zz, int64_t n,
                             KernelStamp stamp) {
  begin_kernel(stamp);
  const double scale = 1.0 / sqrt(*zz);
  for (int64_t i = first_index(); i < n; i += grid_stride()) x[i] = scale * z[i];
  end_kernel(stamp);
}

// With a wait (sources > 0), first the peers' pieces pushed into scratch; with kDot, p.q.
template <int kDots>
__global__ void __launch_bounds__(kVectorThreads)
    sum_pieces_kernel(double* q, const double* w, const double* scratch, int pieces, int own,
                      int64_t m, const double* p_own, SumTarget sum, PushWait wait,
                      KernelStamp stamp) {
  begin_kernel(stamp);
  if (wait.sources > 0) {
    const unsigned long long since = push_device::global_time_ns();
    push_device::wait_for(wait, "the row reduction of w");
    peers_waited(stamp, since);
  }
  double qp = 0.0, pp = 0.0;
  for (int64_t i = first_index(); i < m; i += grid_stride()) {
    double s = 0.0;
    for (int k = 0; k < pieces; ++k) s += (k == own ? w : scratch)[k * m + i];
    q[i] = s;
    add_dots<kDots>(s, p_own, i, qp, pp);
  }
  finish_dots<kDots>(qp, pp, sum, stamp);
  end_kernel(stamp);
}

}  // namespace

void set_early_launch(bool on) { settings.early = on; }

void set_kernel_stamps(KernelSlot* slots, int capacity) {
  settings.slots = slots;
  settings.capacity = slots != nullptr ? capacity : 0;
  settings.names.clear();
}

std::vector<const char*> kernel_stamp_names() { return settings.names; }

namespace {
__global__ void reset_slots_kernel(KernelSlot* slots, int count) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    slots[i] = KernelSlot{~0ull, 0, 0};
}
}  // namespace

void launch_reset_stamps(KernelSlot* slots, int count, cudaStream_t stream) {
  reset_slots_kernel<<<(count + 255) / 256, 256, 0, stream>>>(slots, count);
}

void launch_spmv(const SpmvArgs& args, SumTarget sum, int blocks, cudaStream_t stream) {
  if (args.p_own) {
    launch("spmv", spmv_kernel<true>, blocks, kSpmvThreads, 0, stream, args, sum);
  } else {
    launch("spmv", spmv_kernel<false>, blocks, kSpmvThreads, 0, stream, args, sum);
  }
}

namespace {

// The instances: 8 lanes x 8 entries, 16 x 4 and 32 x 4, each with and without prefetch.
template <class Visit>
void for_each_slab_kernel(int lanes, bool prefetch, Visit&& visit) {
  if (lanes == 8) {
    prefetch ? visit(spmv_slab_kernel<8, 8, true>) : visit(spmv_slab_kernel<8, 8, false>);
  } else if (lanes == 16) {
    prefetch ? visit(spmv_slab_kernel<16, 4, true>) : visit(spmv_slab_kernel<16, 4, false>);
  } else {
    prefetch ? visit(spmv_slab_kernel<32, 4, true>) : visit(spmv_slab_kernel<32, 4, false>);
  }
}

}  // namespace

void launch_spmv_slabs(const SlabArgs& args, int lanes, bool prefetch, int chunks,
                       cudaStream_t stream) {
  const size_t shared = slab_shared_bytes(args.width);
  const int blocks = args.slabs * chunks;
  for_each_slab_kernel(lanes, prefetch, [&](auto kernel) {
    launch("spmv_slab", kernel, blocks, kSlabThreads, shared, stream, args);
  });
}

int slab_blocks_per_multiprocessor(int width) {
  const int shared = static_cast<int>(slab_shared_bytes(width));
  int fewest = INT32_MAX;
  for (int lanes : {8, 16, 32}) {
    for (bool prefetch : {false, true}) {
      for_each_slab_kernel(lanes, prefetch, [&](auto kernel) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
        int blocks = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kSlabThreads, shared);
        fewest = std::min(fewest, blocks);
      });
    }
  }
  return std::max(1, fewest);
}

int slab_width_limit() {
  int device = 0, bytes = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  const int width =
      ((bytes - static_cast<int>(slab_shared_bytes(0))) / static_cast<int>(sizeof(double))) / 32 *
      32;
  return std::clamp(width, 32, 65536);
}

void launch_spmv_tiles(const TileArgs& args, int blocks, cudaStream_t stream) {
  const size_t shared = slab_shared_bytes(args.width);
  launch("spmv_tile", spmv_tile_kernel, blocks, kSlabThreads, shared, stream, args);
}

size_t symmetric_tile_shared_bytes(int width) {
  return slab_shared_bytes(width) + static_cast<size_t>(width) * sizeof(double);
}

void launch_spmv_symmetric_tiles(const SymmetricTileArgs& args, int blocks, cudaStream_t stream) {
  launch("spmv_symmetric_tile", spmv_symmetric_tile_kernel, blocks, kSlabThreads,
         symmetric_tile_shared_bytes(args.tiles.width), stream, args);
}

int symmetric_tile_blocks_per_multiprocessor(int width) {
  const int shared = static_cast<int>(symmetric_tile_shared_bytes(width));
  cudaFuncSetAttribute(spmv_symmetric_tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       shared);
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spmv_symmetric_tile_kernel, kSlabThreads,
                                                shared);
  return std::max(1, blocks);
}

void launch_symmetric_sum(const SymmetricTileArgs& args, double* y, const double* p_own, bool pair,
                          SumTarget sum, int blocks, cudaStream_t stream) {
  if (p_own && pair) {
    launch("symmetric_sum", symmetric_sum_kernel<2>, blocks, kVectorThreads, 0, stream, args, y,
           p_own, sum);
  } else if (p_own) {
    launch("symmetric_sum", symmetric_sum_kernel<1>, blocks, kVectorThreads, 0, stream, args, y,
           p_own, sum);
  } else {
    launch("symmetric_sum", symmetric_sum_kernel<0>, blocks, kVectorThreads, 0, stream, args, y,
           p_own, sum);
  }
}

int tile_blocks_per_multiprocessor(int width) {
  const int shared = static_cast<int>(slab_shared_bytes(width));
  cudaFuncSetAttribute(spmv_tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spmv_tile_kernel, kSlabThreads, shared);
  return std::max(1, blocks);
}

void launch_slab_sum(const double* partial, int slabs, int64_t rows, double* y, const double* p_own,
                     bool pair, SumTarget sum, const PieceFusion* fusion, int blocks,
                     cudaStream_t stream) {
  if (fusion) {
    launch("slab_sum_push", slab_sum_push_kernel, blocks, kVectorThreads, 0, stream, partial, slabs,
           rows, y, *fusion);
  } else if (p_own && pair) {
    launch("slab_sum", slab_sum_kernel<2>, blocks, kVectorThreads, 0, stream, partial, slabs, rows,
           y, p_own, sum);
  } else if (p_own) {
    launch("slab_sum", slab_sum_kernel<1>, blocks, kVectorThreads, 0, stream, partial, slabs, rows,
           y, p_own, sum);
  } else {
    launch("slab_sum", slab_sum_kernel<0>, blocks, kVectorThreads, 0, stream, partial, slabs, rows,
           y, p_own, sum);
  }
}

int spmv_blocks_per_multiprocessor() {
  int with_dot = 0, without = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&with_dot, spmv_kernel<true>, kSpmvThreads, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&without, spmv_kernel<false>, kSpmvThreads, 0);
  return std::max(1, std::min(with_dot, without));
}

void launch_fill(double* v, int64_t n, int64_t real, double value, int blocks,
                 cudaStream_t stream) {
  launch("fill", fill_kernel, blocks, kVectorThreads, 0, stream, v, n, real, value);
}

void launch_cg_begin(const double* x, double* z, double* r, double* p, int64_t n, double* previous,
                     const SumTarget* sum, int blocks, cudaStream_t stream) {
  if (sum) {
    launch("cg_begin", cg_begin_kernel<true>, blocks, kVectorThreads, 0, stream, x, z, r, p, n,
           previous, *sum);
  } else {
    launch("cg_begin", cg_begin_kernel<false>, blocks, kVectorThreads, 0, stream, x, z, r, p, n,
           previous, SumTarget{});
  }
}

void launch_dot(const double* a, const double* b, int64_t n, SumTarget sum, int blocks,
                cudaStream_t stream) {
  launch("dot", dot_kernel, blocks, kVectorThreads, 0, stream, a, b, n, sum);
}

void launch_dot_pair(const double* p, const double* q, int64_t n, SumTarget sum, int blocks,
                     cudaStream_t stream) {
  launch("dot_pair", dot_pair_kernel, blocks, kVectorThreads, 0, stream, p, q, n, sum);
}

void launch_update_zr(StepScalars scalars, double* z, double* r, const double* p, const double* q,
                      int64_t n, const SumTarget* sum, int blocks, cudaStream_t stream) {
  if (sum) {
    launch("update_zr", update_zr_kernel<true>, blocks, kVectorThreads, 0, stream, scalars, z, r, p,
           q, n, *sum);
  } else {
    launch("update_zr", update_zr_kernel<false>, blocks, kVectorThreads, 0, stream, scalars, z, r,
           p, q, n, SumTarget{});
  }
}

void launch_update_p(StepScalars scalars, const double* r, double* p, int64_t n,
                     const PushFusion* fusion, int blocks, cudaStream_t stream) {
  if (fusion) {
    launch("update_p_push", update_p_push_kernel, blocks, kVectorThreads, 0, stream, scalars, r, p,
           n, *fusion);
  } else {
    launch("update_p", update_p_kernel, blocks, kVectorThreads, 0, stream, scalars, r, p, n);
  }
}

void launch_update_single(StepScalars scalars, unsigned* counter, double* d, double* s, double* z,
                          double* r, const double* w, int64_t n, const PushFusion* fusion,
                          int blocks, cudaStream_t stream) {
  if (fusion) {
    launch("update_single_push", update_single_kernel<true>, blocks, kVectorThreads, 0, stream,
           scalars, counter, d, s, z, r, w, n, *fusion);
  } else {
    launch("update_single", update_single_kernel<false>, blocks, kVectorThreads, 0, stream, scalars,
           counter, d, s, z, r, w, n, PushFusion{});
  }
}

void launch_update_pipelined(StepScalars scalars, unsigned* counter, const PipelinedVectors& v,
                             int64_t n, const SumTarget* sum, int blocks, cudaStream_t stream) {
  if (sum) {
    launch("update_pipelined", update_pipelined_kernel<true>, blocks, kVectorThreads, 0, stream,
           scalars, counter, v, n, *sum);
  } else {
    launch("update_pipelined", update_pipelined_kernel<false>, blocks, kVectorThreads, 0, stream,
           scalars, counter, v, n, SumTarget{});
  }
}

void launch_pipelined_begin(const double* x, const double* ax, const PipelinedVectors& v, int64_t n,
                            double* previous, const SumTarget* sum, const ReducePlan* post,
                            int blocks, cudaStream_t stream) {
  if (sum) {
    launch("pipelined_begin", pipelined_begin_kernel<true>, blocks, kVectorThreads, 0, stream, x,
           ax, v, n, previous, *sum, post);
  } else {
    launch("pipelined_begin", pipelined_begin_kernel<false>, blocks, kVectorThreads, 0, stream, x,
           ax, v, n, previous, SumTarget{}, static_cast<const ReducePlan*>(nullptr));
  }
}

void launch_update_pipelined_overlap(StepScalars scalars, const PipelinedOverlap& o, int64_t n,
                                     const PushFusion& fusion, int blocks, cudaStream_t stream) {
  launch("update_pipelined_push", update_pipelined_overlap_kernel, blocks, kVectorThreads, 0,
         stream, scalars, o, n, fusion);
}

void launch_settle_pair(const ReducePlan* pair, double* global, cudaStream_t stream) {
  launch("settle_pair", settle_pair_kernel, 1, 32, 0, stream, pair, global);
}

void launch_scaled_copy(double* dst, const double* src, double value, const double* divisor_square,
                        int64_t n, int blocks, cudaStream_t stream) {
  launch("scaled_copy", scaled_copy_kernel, blocks, kVectorThreads, 0, stream, dst, src, value,
         divisor_square, n);
}

void launch_distance(const double* a, const double* b, int64_t n, int64_t real, SumTarget sum,
                     int blocks, cudaStream_t stream) {
  launch("distance", distance_kernel, blocks, kVectorThreads, 0, stream, a, b, n, real, sum);
}

void launch_distance_to(const double* a, double value, int64_t n, int64_t real, SumTarget sum,
                        int blocks, cudaStream_t stream) {
  launch("distance_to", distance_to_kernel, blocks, kVectorThreads, 0, stream, a, value, n, real,
         sum);
}

void launch_norms(const double* x, const double* z, int64_t n, SumTarget sum, int blocks,
                  cudaStream_t stream) {
  launch("norms", norms_kernel, blocks, kVectorThreads, 0, stream, x, z, n, sum);
}

void launch_scale(double* x, const double* z, const double* zz, int64_t n, int blocks,
                  cudaStream_t stream) {
  launch("scale", scale_kernel, blocks, kVectorThreads, 0, stream, x, z, zz, n);
}

void launch_sum_pieces(double* q, const double* w, const double* scratch, int pieces, int own,
                       int64_t m, const double* p_own, const SumTarget* sum, const PushWait& wait,
                       bool pair, int blocks, cudaStream_t stream) {
  if (sum && pair) {
    launch("sum_pieces", sum_pieces_kernel<2>, blocks, kVectorThreads, 0, stream, q, w, scratch,
           pieces, own, m, p_own, *sum, wait);
  } else if (sum) {
    launch("sum_pieces", sum_pieces_kernel<1>, blocks, kVectorThreads, 0, stream, q, w, scratch,
           pieces, own, m, p_own, *sum, wait);
  } else {
    launch("sum_pieces", sum_pieces_kernel<0>, blocks, kVectorThreads, 0, stream, q, w, scratch,
           pieces, own, m, p_own, SumTarget{}, wait);
  }
}

}  // namespace tca_cg
