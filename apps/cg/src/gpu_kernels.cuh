// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Kernels of the GPU engine. Sums over a vector are deterministic: each block reduces its
// part in a fixed order, writes one partial, and the last block to finish (a counter) adds
// the partials in block order and resets the counter.
#pragma once

#include <cstdint>
#include <vector>

#include "tca_push.h"

namespace tca_cg {

inline constexpr int kVectorThreads = 256;

// Whether the launches below let each kernel start while the one before it in the stream still
// runs (programmatic dependent launch; the caller checks the device has compute capability 9.0
// or more). Every kernel here waits for its predecessor's end (griddepcontrol.wait) before it
// reads or writes anything its predecessors touch, and then lets its own successor launch; a
// kernel launched without it, or by another library, starts after the previous one has ended as
// usual. For the whole process, as the engine that sets it last says.
void set_early_launch(bool on);

// Kernel times (tca-cg --kernel-times): while stamps are set, each launch below takes the next
// slot, and the kernel's blocks record there by %globaltimer (ns) its earliest start of work
// (after its predecessor's end), its latest end, and the longest wait of one block for the
// peers (their pieces of p before the SpMV, their sums at the end of a fused sum).
struct KernelSlot {
  unsigned long long begin;  // ~0 until a block starts
  unsigned long long end;
  unsigned long long peer_wait;
};
struct KernelStamp {
  KernelSlot* slot;  // nullptr: the launch records nothing
};
// `slots` (device memory, `capacity` of them) for the launches from now on, numbered from 0;
// nullptr: none.
void set_kernel_stamps(KernelSlot* slots, int capacity);
// The kernels that took slots since set_kernel_stamps, in launch order.
std::vector<const char*> kernel_stamp_names();
// Sets `count` slots to their start values (begin ~0, end and peer_wait 0) on `stream`.
void launch_reset_stamps(KernelSlot* slots, int count, cudaStream_t stream);
inline constexpr int kSpmvThreads = 256;

// Where a kernel's sums go: per-block partials, the arrival counter, the outputs. With a
// device-side allreduce (`reduce`, in device memory: --tca-exchange fused), the last block also
// sums the outputs over the ranks into `global`.
struct SumTarget {
  double* partials;   // gridDim.x * width
  unsigned* counter;  // 0 between launches
  double* out;        // width values
  double* global = nullptr;
  const ReducePlan* reduce = nullptr;
};

// Pipelined CG with the pair posted: the SpMV's block 0, once its rows are done, collects the
// pair the update before it posted into global[0..1] (w.r, r.r), which the update after it
// reads; plan null: nothing.
struct PairCollect {
  const ReducePlan* plan = nullptr;  // device memory
  double* global = nullptr;
};

// Scalars a kernel reads or writes (device pointers; on one rank a global is its local twin).
struct StepScalars {
  const double* dot;
  const double* rho;
  double* rho_previous;
  double* alpha_previous;  // single-reduction CG
};

struct SpmvArgs {
  int64_t rows;
  const int64_t* row_ptr;
  const int32_t* col;
  const double* val;
  const double* x;
  double* y;
  const double* p_own;  // fused dot: y . p_own (nullptr: no dot)
};

void launch_spmv(const SpmvArgs& args, SumTarget sum, int blocks, cudaStream_t stream);
// Blocks of the SpMV kernel one multiprocessor holds at once (its grid is one full wave, so
// that every block's fixed share of rows starts at once).
int spmv_blocks_per_multiprocessor();

// Symmetric storage (gpu_symmetric.cu): args is the upper triangle with the diagonal; y (rows
// elements, the matrix square) is zeroed, then y = U x + U^T x - D x by double atomics. No
// fused dot (p_own is ignored).
void launch_spmv_symmetric(const SpmvArgs& args, int blocks, cudaStream_t stream);
int spmv_symmetric_blocks_per_multiprocessor();

// Column slabs: the block's columns cut into slabs of `width`; slab s holds, row by row, the
// entries whose column lies in [s*width, (s+1)*width), with 16-bit columns local to the slab.
struct SlabArgs {
  int64_t rows;
  int64_t cols;  // columns of x
  int slabs;
  int width;                 // columns per slab (at most 65536)
  const int64_t* slab_base;  // slabs: first entry of each slab in col / val
  const uint32_t* row_ptr;   // slabs x (rows + 1): offsets inside the slab
  const uint16_t* col;
  const double* val;
  const double* x;
  double* partial;   // slabs x rows: each slab's part of y
  PushWait wait;     // --tca-exchange fused: the peers' pieces of x, waited for before x is read
  PairCollect pair;  // pipelined CG with the pair posted: block 0 collects it after its rows
};
inline constexpr int kSlabThreads = 1024;
// One block per (slab, chunk of rows): the slab's piece of x goes to shared memory, groups of
// `lanes` threads (8: 8 entries each at once; 16 or 32: 4) take rows; `prefetch` loads the
// next row while the current one is summed. Grid: slabs * chunks blocks.
void launch_spmv_slabs(const SlabArgs& args, int lanes, bool prefetch, int chunks,
                       cudaStream_t stream);
// Blocks of the slab kernel one multiprocessor holds with `width` doubles of shared memory;
// also raises the kernels' shared-memory limit to that.
int slab_blocks_per_multiprocessor(int width);
// The widest slab the device's shared memory holds (a multiple of 32, at most 65536).
int slab_width_limit();
// y[row] = sum over slabs of partial[s*rows + row], in slab order; with p_own, out[0] = y . p_own
// (and with pair out[1] = p_own . p_own); with a fusion (2d, not nullptr; no dot), the rows of
// other ranks' pieces also go to their scratch (tca_push.h).
void launch_slab_sum(const double* partial, int slabs, int64_t rows, double* y, const double* p_own,
                     bool pair, SumTarget sum, const PieceFusion* fusion, int blocks,
                     cudaStream_t stream);

// Tiled slabs (slab_format.h): tiles of 256 entries, slab after slab; a block takes an equal
// share of all tiles (which may span a slab boundary: it loads each slab's x it meets), a warp
// a tile at a time. Writes partial[s * rows + row] for every (slab, row) with entries; the
// others must hold zero (set once).
struct TileArgs {
  int64_t rows;
  int64_t cols;  // columns of x
  int slabs;
  int width;  // columns per slab (at most 65536)
  int64_t tiles;
  const int64_t* slab_tiles;  // slabs + 1: first tile of each slab
  const int32_t* tile_row;    // first row of each tile
  const double* val;          // tiles x 256, in tile_value_index order
  const uint16_t* col;        // tiles x 256
  const uint8_t* starts;      // tiles x 32: the row-start bits, a byte per lane
  const double* x;
  double* partial;   // slabs x rows
  PushWait wait;     // as SlabArgs
  PairCollect pair;  // as SlabArgs
};
void launch_spmv_tiles(const TileArgs& args, int blocks, cudaStream_t stream);

// The symmetric tile kernel (symmetric_tiles.h): `tiles` holds the upper triangle of the one
// rank's square matrix (x the whole vector, no waits, no pair); the segments' column sums go
// to `sums` (segments x width). Its blocks must be the count the segments were made for.
struct SymmetricTileArgs {
  TileArgs tiles;
  const int32_t* first_block;    // slabs
  const int64_t* first_segment;  // slabs + 1
  double* sums;                  // segments x width
};
void launch_spmv_symmetric_tiles(const SymmetricTileArgs& args, int blocks, cudaStream_t stream);
// Blocks one multiprocessor holds with two slabs of `width` doubles; also raises the kernel's
// shared-memory limit to that.
int symmetric_tile_blocks_per_multiprocessor(int width);
// y = the row sums and the column sums (symmetric_tiles_sum); with p_own the dots as
// launch_slab_sum's.
void launch_symmetric_sum(const SymmetricTileArgs& args, double* y, const double* p_own, bool pair,
                          SumTarget sum, int blocks, cudaStream_t stream);
// Blocks of the tile kernel one multiprocessor holds with `width` doubles of shared memory;
// also raises the kernel's shared-memory limit to that.
int tile_blocks_per_multiprocessor(int width);

void launch_fill(double* v, int64_t n, int64_t real, double value, int blocks, cudaStream_t stream);
// z = 0, r = x, p = x, previous[0] = previous[1] = 0; with a target, target.out[0] = x.x.
void launch_cg_begin(const double* x, double* z, double* r, double* p, int64_t n, double* previous,
                     const SumTarget* sum, int blocks, cudaStream_t stream);
// out[0] = a.b
void launch_dot(const double* a, const double* b, int64_t n, SumTarget sum, int blocks,
                cudaStream_t stream);
// out[0] = p.q, out[1] = p.p
void launch_dot_pair(const double* p, const double* q, int64_t n, SumTarget sum, int blocks,
                     cudaStream_t stream);
// alpha = rho / dot; rho_previous = rho; z += alpha p; r -= alpha q; with a target r.r.
void launch_update_zr(StepScalars scalars, double* z, double* r, const double* p, const double* q,
                      int64_t n, const SumTarget* sum, int blocks, cudaStream_t stream);
// p = r + (rho / rho_previous) p; with a fusion (not nullptr), p's elements also go to the peers
// (tca_push.h).
void launch_update_p(StepScalars scalars, const double* r, double* p, int64_t n,
                     const PushFusion* fusion, int blocks, cudaStream_t stream);
// Single-reduction CG's update (engine.h, Engine::update_single): r is the exchanged p, w is q;
// every block reads the scalars as it starts, and the last block to end (by `counter`, 0
// between launches, or with a fusion by the push's own arrival) stores the step's gamma and
// alpha as the previous ones. With a fusion (not nullptr), r's elements also go to the peers
// (tca_push.h).
void launch_update_single(StepScalars scalars, unsigned* counter, double* d, double* s, double* z,
                          double* r, const double* w, int64_t n, const PushFusion* fusion,
                          int blocks, cudaStream_t stream);
// Pipelined CG's vectors (engine.h): w is the exchanged p's own piece, q = A w.
struct PipelinedVectors {
  double* z;
  double* r;
  double* w;
  double* u;
  double* s;
  double* d;
  const double* q;
};
// Engine::update_pipelined; with a target, the pair out[0] = w.r, out[1] = r.r of the new
// vectors. `counter` (0 between launches) as launch_update_single's without a target.
void launch_update_pipelined(StepScalars scalars, unsigned* counter, const PipelinedVectors& v,
                             int64_t n, const SumTarget* sum, int blocks, cudaStream_t stream);
// Engine::pipelined_begin: z = 0, r = x, w = ax, u = s = d = 0, previous[0..1] = 0; with a
// target the pair w.r, r.r, and with `post` (device memory; the target then sums over no
// ranks) that pair posted into every rank's pair mailbox.
void launch_pipelined_begin(const double* x, const double* ax, const PipelinedVectors& v, int64_t n,
                            double* previous, const SumTarget* sum, const ReducePlan* post,
                            int blocks, cudaStream_t stream);
// Pipelined CG with the pair posted (Engine::update_pipelined_overlapped; 1d, slab SpMV,
// --tca-exchange fused): q's elements summed here from the SpMV's slab partials (no slab sum
// kernel), the coefficients from the pair the previous update (or the start) posted (which
// the SpMV between them collected into the global scalars), w's new elements into w_next and into
// every peer's copy of it (`fusion`), the new pair posted.
struct PipelinedOverlap {
  PipelinedVectors v;     // v.w: this step's w (own piece of the p_full the SpMV read); v.q unused
  double* w_next;         // own piece of the other p_full
  const double* partial;  // slabs x rows: the SpMV's slab partials
  int slabs;
  int64_t rows;
  const ReducePlan* pair;  // device memory: where the new pair is posted
  double* partials;        // 2 per block: the blocks' sums of the pair
  double* local_pair;      // this rank's pair (w.r, r.r)
};
void launch_update_pipelined_overlap(StepScalars scalars, const PipelinedOverlap& o, int64_t n,
                                     const PushFusion& fusion, int blocks, cudaStream_t stream);
// The last posted pair, collected into global[0..1] (w.r, r.r).
void launch_settle_pair(const ReducePlan* pair, double* global, cudaStream_t stream);
// dst = value * src / sqrt(*divisor_square) (divisor_square nullptr: value * src).
void launch_scaled_copy(double* dst, const double* src, double value, const double* divisor_square,
                        int64_t n, int blocks, cudaStream_t stream);
// out[0] = sum (a - b)^2 over i < real
void launch_distance(const double* a, const double* b, int64_t n, int64_t real, SumTarget sum,
                     int blocks, cudaStream_t stream);
// out[0] = sum (a - value)^2 over i < real
void launch_distance_to(const double* a, double value, int64_t n, int64_t real, SumTarget sum,
                        int blocks, cudaStream_t stream);
// out[0] = x.z, out[1] = z.z
void launch_norms(const double* x, const double* z, int64_t n, SumTarget sum, int blocks,
                  cudaStream_t stream);
// x = z / sqrt(*zz)
void launch_scale(double* x, const double* z, const double* zz, int64_t n, int blocks,
                  cudaStream_t stream);
// q[i] = sum over k < pieces of (k == own ? w : scratch)[k*m + i], once `wait`'s sources have
// pushed (none: at once); with a target, out[0] = q . p_own (and with pair out[1] = p_own . p_own).
void launch_sum_pieces(double* q, const double* w, const double* scratch, int pieces, int own,
                       int64_t m, const double* p_own, const SumTarget* sum, const PushWait& wait,
                       bool pair, int blocks, cudaStream_t stream);

}  // namespace tca_cg
