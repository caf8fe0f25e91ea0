// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The numerical side of a CG run on one rank: its block of A, its pieces of the vectors and
// the operations of a CG step, on the CPU (threads) or the GPU (kernels on one stream).
// Communication (comm.h) works on the buffers the engine exposes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "csr.h"
#include "layout.h"
#include "phases.h"

namespace tca_cg {

struct ReducePlan;   // tca_push.h: a device-side allreduce of the push exchange
struct PushFusion;   // tca_push.h: p's elements stored into the peers by the kernel that forms p
struct PushWait;     // tca_push.h: what a kernel waits for before it reads pushed data
struct PieceFusion;  // tca_push.h: 2d, w's pieces stored into the peers by the SpMV's slab sum

// Scalars of the iteration, kept next to the vectors (GPU memory on the GPU). Each "local"
// value is this rank's part of a sum, its global twin the sum over ranks (comm.h allreduce).
enum Scalar : int {
  kDotLocal = 0,  // p.q
  kRhoLocal,      // r.r
  kNormXZLocal,   // x.z   (kNormXZLocal and kNormZZLocal are reduced together)
  kNormZZLocal,   // z.z
  kSumLocal,      // residual or error sums
  kDot,
  kRho,
  kNormXZ,
  kNormZZ,
  kSum,
  kRhoPrevious,    // rho of the step before, for beta (0 from cg_begin: no step before)
  kAlphaPrevious,  // single-reduction CG: alpha of the step before
  kScalarCount
};
inline constexpr int kGlobalOffset = kDot - kDotLocal;  // local + this = its global twin
// Single-reduction CG sums p.q and r.r as one pair, and cg_begin clears the previous values as
// one pair.
static_assert(kRhoLocal == kDotLocal + 1 && kRho == kDot + 1 && kAlphaPrevious == kRhoPrevious + 1);

// Memory for the buffers the communication touches (tca wants them from tcaMalloc); the
// engine zero-fills what it gets.
struct Allocator {
  std::function<double*(size_t count)> allocate;  // nullptr when out of memory
  std::function<void(double*)> release;
};

// What communication reads and writes. 1d: p is p_full's piece `rank`, w is q.
struct Buffers {
  double* p = nullptr;       // own piece of p (m)
  double* p_full = nullptr;  // SpMV input: block's columns (cols_padded)
  // GPU, pipelined CG, 1d, several ranks: a second p_full, which steps use in turn with p_full
  // where the update pushes w and posts its pair (Engine::set_overlap); else null.
  double* p_full_alt = nullptr;
  double* w = nullptr;        // SpMV output: block's rows (rows_padded)
  double* q = nullptr;        // own piece of q = A p (m)
  double* scratch = nullptr;  // 2d: grid pieces of m received for the row reduction
  double* scalars = nullptr;  // kScalarCount
  void* stream = nullptr;     // GPU: the cudaStream_t all of the engine's work goes to
};

enum class Device { kCpu, kGpu };

// The CG recurrence. kClassic is NPB's: q = A p, then p.q summed over the ranks, z and r
// updated, r.r summed, p updated: two sums a step. kSingleReduction is Chronopoulos and Gear's
// form of the same method: the SpMV multiplies r (w = A r), r.r and w.r are summed together,
// and s = A p follows by recurrence (s = w + beta s): one sum a step, one more vector pass.
// kPipelined is Ghysels and Vanroose's pipelined form: the SpMV multiplies w (kept as A r by
// recurrence, w = w - alpha u), and the pair w.r, r.r of the next step is formed by the update
// itself, so its sum over the ranks need not wait for the SpMV that follows; u = A s and s = A p
// follow by recurrence too: one sum a step, two more vector passes than the classic form.
// Equal in exact arithmetic; in floating point the iterates differ by rounding.
enum class CgVariant { kClassic, kSingleReduction, kPipelined };
const char* cg_variant_name(CgVariant variant);

// One kernel launch as the kernel recorded it (--kernel-times): µs from the first launch's
// start; peer_wait_us the longest wait of one of its blocks for the peers.
struct KernelTime {
  std::string name;
  double begin_us = 0;
  double end_us = 0;
  double peer_wait_us = 0;
};
const char* device_name(Device device);

// SpMV on the GPU: own kernels over column slabs with x in shared memory (kOwn: the slab
// kernel chosen from the block's statistics, slab_format.h; kSlabRows / kSlabTiles: that
// kernel forced), plain CSR with a warp per row, or cuSPARSE's CSR SpMV; or symmetric storage
// (the upper triangle, one rank only), on the CPU too, where kOwn is the plain CSR loop;
// kSymmetricTiles: the upper triangle in slab tiles (symmetric_tiles.h; GPU, one rank).
enum class SpmvKind { kOwn, kSlabRows, kSlabTiles, kCsr, kCusparse, kSymmetric, kSymmetricTiles };

class Engine {
 public:
  virtual ~Engine() = default;

  // The recurrence the step's operations serve (kClassic until set). With kSingleReduction the
  // exchanged vector p holds r: cg_begin sets it to x, the SpMV forms w = A r, every formation
  // of "p.q" (spmv, sum_pieces and dot_pq with their dot) forms the pair kDotLocal = p.q and
  // kRhoLocal = p.p, dot_rr forms p.p, and update_single replaces update_zr and update_p.
  void set_variant(CgVariant variant) { variant_ = variant; }
  CgVariant variant() const { return variant_; }

  virtual Device device() const = 0;
  virtual const Buffers& buffers() const = 0;
  // Whether the CG step's dot products are computed inside the SpMV and update kernels
  // (then spmv(true) and update_zr(true) replace dot_pq and dot_rr).
  virtual bool fuses_dots() const = 0;
  virtual std::string describe() const = 0;  // threads, or GPU and SpMV kernel
  // Bytes one SpMV reads and writes in the engine's format (matrix, offsets, x, y).
  virtual double spmv_bytes() const = 0;
  // The SpMV kernel that runs (GPU slabs: "slab-rows" or "slab-tiles"), and where it was
  // chosen from the block's shape, the statistics and the rule (else empty).
  virtual std::string spmv_kernel() const { return ""; }
  virtual std::string spmv_choice() const { return ""; }

  // The block of A (moved in; the GPU copies it and frees the host arrays).
  virtual void set_matrix(LocalCsr matrix) = 0;

  virtual void fill_x(double value) = 0;  // x = value on real elements, 0 on padding
  virtual void set_x(const std::vector<double>& piece) = 0;  // x = piece (m elements)
  virtual void copy_q_to_x() = 0;
  virtual void fill_p(double value) = 0;  // p = value on real elements
  // Every element of p_full = value, padding included (--spmv-alone: x without an exchange).
  virtual void fill_p_full(double value) = 0;
  virtual void copy_z_to_p() = 0;

  // z = 0, r = x, p = r, kRhoPrevious = kAlphaPrevious = 0; fused: kRhoLocal = r.r.
  virtual void cg_begin(bool fuse_dot) = 0;
  // w = A p_full; fused (1d, where w is q): kDotLocal = p.q (2d: sum_pieces forms it).
  virtual void spmv(bool fuse_dot) = 0;
  // q = sum of `pieces` pieces of m in order: piece k is w's piece k when k == own, else
  // scratch piece k (the 2d row reduction of the direct exchanges); fused: kDotLocal = p.q.
  virtual void sum_pieces(int pieces, int own, bool fuse_dot) = 0;
  virtual void dot_pq() = 0;  // kDotLocal = p.q
  virtual void dot_rr() = 0;  // kRhoLocal = r.r
  // alpha = kRho / kDot, kRhoPrevious = kRho, z += alpha p, r -= alpha q; fused: kRhoLocal.
  virtual void update_zr(bool fuse_dot) = 0;
  // beta = kRho / kRhoPrevious, p = r + beta p.
  virtual void update_p() = 0;
  // kSingleReduction, after the pair's sum (gamma = kRho = r.r, delta = kDot = w.r, w = q):
  // beta = gamma / kRhoPrevious (0 where kRhoPrevious is 0: the first step), alpha = gamma /
  // (delta - beta gamma / kAlphaPrevious) (first step: gamma / delta); kRhoPrevious = gamma,
  // kAlphaPrevious = alpha; d = r + beta d, s = w + beta s, z += alpha d, r -= alpha s (r is p:
  // with a push fusion its elements also go to the peers).
  virtual void update_single() = 0;
  // kPipelined (the exchanged vector p holds w, the SpMV forms q = A w):
  // q holds A times ones: kept, and from now on fill_x(value) also sets A x = value A 1, and
  // scale_x sets A x = q / sqrt(kNormZZ) (q being A z, the residual's product before it).
  virtual void keep_ones_product() = 0;
  // z = 0, r = x, p = A x (from_q: q, else the A x kept by fill_x or scale_x), d = s = u = 0,
  // kRhoPrevious = kAlphaPrevious = 0; fused: the pair kDotLocal = p.r, kRhoLocal = r.r.
  virtual void pipelined_begin(bool from_q, bool fuse_dot) = 0;
  // After the pair's sum (gamma = kRho, delta = kDot): beta and alpha as update_single, then
  // u = q + beta u, s = p + beta s, d = r + beta d, z += alpha d, r -= alpha s, p -= alpha u;
  // fused: the new pair.
  virtual void update_pipelined(bool fuse_dot) = 0;
  virtual void dots_pipelined() = 0;         // kDotLocal = p.r, kRhoLocal = r.r
  virtual void residual_sum() = 0;           // kSumLocal = sum (x - q)^2
  virtual void error_sum(double exact) = 0;  // kSumLocal = sum over real elements (z - exact)^2
  virtual void norms() = 0;                  // kNormXZLocal = x.z, kNormZZLocal = z.z
  virtual void scale_x() = 0;                // x = z / sqrt(kNormZZ)

  // Staging of device data for communication that works on host memory (MPI here): host
  // memory owned by the engine (GPU: pinned), and synchronous copies after the engine's work.
  virtual double* host_staging(size_t count) = 0;
  virtual void download(double* host, const double* buffer, size_t count) = 0;
  virtual void upload(double* buffer, const double* host, size_t count) = 0;

  // Waits for the engine's work and returns the scalar.
  virtual double scalar(Scalar which) = 0;
  virtual void synchronize() = 0;

  // A clock for this engine's work (GPU: events on its stream).
  virtual std::unique_ptr<PhaseClock> make_clock() = 0;

  // GPU, several ranks: from now on every kernel that forms a local sum (a "local" scalar)
  // also sums it over the ranks into its global twin, through `plan` (device memory, kept by
  // the caller). false where the engine cannot (then nothing changes).
  virtual bool fuse_allreduce(const ReducePlan* plan) {
    (void)plan;
    return false;
  }

  // GPU, several ranks: from now on the update of p also stores p's elements into the peers
  // (`fusion`), and the SpMV waits for theirs (`wait`) before it reads p_full. false where the
  // engine cannot (its SpMV kernel has no wait): then nothing changes.
  virtual bool fuse_push(const PushFusion& fusion, const PushWait& wait) {
    (void)fusion;
    (void)wait;
    return false;
  }
  // GPU, 2d on a grid of several: from now on the SpMV's last kernel also stores the rows of
  // other ranks' pieces of w into their scratch (`fusion`), and sum_pieces waits for the peers'
  // (`wait`) before it reads the scratch. false where the engine cannot: nothing changes.
  virtual bool fuse_reduce(const PieceFusion& fusion, const PushWait& wait) {
    (void)fusion;
    (void)wait;
    return false;
  }
  // GPU, several ranks, pipelined CG: the pair mailbox (`plan`, device memory, kept by the
  // caller) through which set_overlap's updates post and collect their pair. false where the
  // engine cannot: nothing changes.
  virtual bool fuse_pair(const ReducePlan* plan) {
    (void)plan;
    return false;
  }
  // Pipelined CG whose pair travels while the next SpMV runs: from now on pipelined_begin posts
  // its pair instead of summing it, and a step is spmv_partials then update_pipelined_overlapped
  // (which sums q from the partials, takes the coefficients from the pair posted before, pushes
  // w into the peers' other p_full and posts the new pair); settle_pipelined collects the last
  // pair (into kDot and kRho) and must follow the last step before p_full is written again.
  // Needs fuse_push, fuse_allreduce and fuse_pair done and the slab SpMV; returns whether it is
  // on (off: nothing changes).
  virtual bool set_overlap(bool on) {
    (void)on;
    return false;
  }
  virtual void spmv_partials() {}
  virtual void update_pipelined_overlapped() {}
  virtual void settle_pipelined() {}
  // Whether the last write of p was such an update (then p needs no exchange before the next
  // SpMV); clears it.
  virtual bool take_pushed_p() { return false; }

  // GPU: records the work `body` enqueues as one CUDA graph and returns its number (>= 0),
  // or -1 where the engine cannot capture (CPU). launch_graph replays it.
  virtual int capture_graph(const std::function<void()>& body) {
    (void)body;
    return -1;
  }
  virtual void launch_graph(int graph) { (void)graph; }

  // GPU: captures `body` in a CUDA graph whose kernels record their own times, replays it
  // `units` times and returns the launches of the last replay in order; empty where the engine
  // cannot (CPU).
  virtual std::vector<KernelTime> kernel_times(const std::function<void()>& body, int units) {
    (void)body;
    (void)units;
    return {};
  }

 private:
  CgVariant variant_ = CgVariant::kClassic;
};

// The slab kernel's shape (--spmv own): threads per row (0: 16 where the average row of a
// slab has at most 64 entries, else 32), and whether the next row is loaded in advance.
struct SlabOptions {
  int lanes = 0;
  bool prefetch = true;
};

// The GPU engine's options: the slab kernel's shape, and whether each kernel is launched while
// the one before it still runs (programmatic dependent launch, compute capability 9.0 and up:
// the kernel's blocks start waiting for their predecessor's end inside the kernel, which saves
// the gap between the two; elsewhere, or with early_launch false, a kernel starts after the
// previous one has ended).
struct GpuOptions {
  SlabOptions slab;
  bool early_launch = true;
  int threads = 1;  // CPU threads that build the SpMV's format at set-up
};

// Vectors have layout.piece elements; `scratch_pieces` > 0 adds the 2d reduction scratch. On a
// single rank (or a 2d grid of one) p is p_full and w is q, and each global scalar is its local
// twin: nothing needs to be communicated.
std::unique_ptr<Engine> make_cpu_engine(const Layout& layout, const Allocator& allocator,
                                        int scratch_pieces, int threads, SpmvKind spmv);
// nullptr-free: throws std::runtime_error where CUDA is not built in or no GPU is usable.
std::unique_ptr<Engine> make_gpu_engine(const Layout& layout, const Allocator& allocator,
                                        int scratch_pieces, SpmvKind spmv, const GpuOptions& gpu);
bool gpu_engine_built();
// GPUs visible to this process (0 without CUDA or a driver).
int gpu_count();
// Makes GPU (local_rank % gpu_count()) current, the one tcaInit gives this rank.
void select_gpu(int local_rank);

}  // namespace tca_cg
