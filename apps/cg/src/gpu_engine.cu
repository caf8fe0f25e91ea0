// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU engine: the block of A in device memory (CSR, 32-bit columns), the vectors in device
// memory, every operation a kernel (or cuSPARSE's SpMV) on one stream; the dot products of a
// CG step fused into the SpMV and update kernels; a run can be captured as CUDA graphs.
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.h"
#include "engine.h"
#include "gpu_kernels.cuh"
#include "slab_format.h"
#include "symmetric.h"
#include "symmetric_tiles.h"

namespace tca_cg {
namespace {

void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess)
    throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(error));
}

void check_cusparse(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(call) + ": " + cusparseGetErrorString(status));
  }
}

template <class T>
T* device_alloc(size_t count) {
  void* block = nullptr;
  check_cuda(cudaMalloc(&block, std::max<size_t>(count, 1) * sizeof(T)), "cudaMalloc");
  return static_cast<T*>(block);
}

// The launches of one replay as their kernels recorded them (µs from the first start); a
// launch whose kernel never started (no slot written) is left out.
std::vector<KernelTime> kernel_launches(const std::vector<const char*>& names,
                                        const std::vector<KernelSlot>& slots) {
  unsigned long long first = ~0ull;
  for (const KernelSlot& slot : slots) first = std::min(first, slot.begin);
  std::vector<KernelTime> launches;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].begin == ~0ull) continue;
    launches.push_back(KernelTime{names[i], (slots[i].begin - first) * 1e-3,
                                  (slots[i].end - first) * 1e-3, slots[i].peer_wait * 1e-3});
  }
  return launches;
}

// Time between events recorded on the engine's stream.
class EventPhaseClock final : public PhaseClock {
 public:
  // Events made ahead: none need be made while a graph is being captured.
  explicit EventPhaseClock(cudaStream_t stream) : stream_(stream) {
    pool_.resize(kEventsAhead);
    for (cudaEvent_t& event : pool_) check_cuda(cudaEventCreate(&event), "cudaEventCreate");
  }
  ~EventPhaseClock() override {
    for (const Mark& mark : marks_) cudaEventDestroy(mark.event);
    for (cudaEvent_t event : pool_) cudaEventDestroy(event);
  }

  // While the stream is being captured, the marks become event nodes of the graph, recorded
  // again by every replay: collect() after each replay adds the phases of the whole graph.
  void mark(Phase phase) override {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    check_cuda(cudaStreamIsCapturing(stream_, &capture), "cudaStreamIsCapturing");
    const bool captured = capture == cudaStreamCaptureStatusActive;
    if (captured != captured_ && !marks_.empty())
      throw std::logic_error("phase clock: marks both inside and outside a captured graph");
    captured_ = captured;
    cudaEvent_t event;
    if (pool_.empty()) {
      check_cuda(cudaEventCreate(&event), "cudaEventCreate");
    } else {
      event = pool_.back();
      pool_.pop_back();
    }
    if (captured) {
      check_cuda(cudaEventRecordWithFlags(event, stream_, cudaEventRecordExternal),
                 "cudaEventRecordWithFlags");
    } else {
      check_cuda(cudaEventRecord(event, stream_), "cudaEventRecord");
      if (phase != Phase::kNone) ++calls_[static_cast<int>(phase)];
    }
    marks_.push_back({event, phase});
  }

  void collect() override {
    if (marks_.size() < 2) return;
    check_cuda(cudaEventSynchronize(marks_.back().event), "cudaEventSynchronize");
    if (captured_) {  // the graph keeps its events: every replay is read whole
      for (size_t k = 0; k + 1 < marks_.size(); ++k) {
        if (marks_[k].phase == Phase::kNone) continue;
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, marks_[k].event, marks_[k + 1].event),
                   "cudaEventElapsedTime");
        seconds_[static_cast<int>(marks_[k].phase)] += ms * 1e-3;
        ++calls_[static_cast<int>(marks_[k].phase)];
      }
      return;
    }
    for (size_t k = 0; k + 1 < marks_.size(); ++k) {
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, marks_[k].event, marks_[k + 1].event),
                 "cudaEventElapsedTime");
      if (marks_[k].phase != Phase::kNone) seconds_[static_cast<int>(marks_[k].phase)] += ms * 1e-3;
      pool_.push_back(marks_[k].event);
    }
    marks_.erase(marks_.begin(), marks_.end() - 1);  // the last phase goes on
  }

 private:
  struct Mark {
    cudaEvent_t event;
    Phase phase;
  };
  static constexpr int kEventsAhead = 1024;  // an NPB outer iteration marks about 250
  cudaStream_t stream_;
  std::vector<Mark> marks_;
  std::vector<cudaEvent_t> pool_;
  bool captured_ = false;
};

class GpuEngine final : public Engine {
 public:
  GpuEngine(const Layout& layout, const Allocator& allocator, int scratch_pieces, SpmvKind spmv,
            const GpuOptions& gpu)
      : layout_(layout),
        allocator_(allocator),
        spmv_kind_(spmv),
        slab_options_(gpu.slab),
        format_threads_(std::max(1, gpu.threads)),
        m_(layout.piece),
        real_(layout.own_count()) {
    check_cuda(cudaGetDevice(&device_), "cudaGetDevice");
    cudaDeviceProp properties;
    check_cuda(cudaGetDeviceProperties(&properties, device_), "cudaGetDeviceProperties");
    device_label_ = properties.name;
    multiprocessors_ = properties.multiProcessorCount;
    early_launch_ = gpu.early_launch && properties.major >= 9;
    set_early_launch(early_launch_);
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    buffers_.stream = stream_;

    const bool one_block = layout.partition == Partition::kOneD || layout.grid == 1;
    buffers_.p_full = allocate(layout.block.cols_padded);
    buffers_.p = one_block ? buffers_.p_full + layout.rank * m_ : allocate(m_);
    buffers_.q = allocate(m_);
    buffers_.w = one_block ? buffers_.q : allocate(layout.block.rows_padded);
    if (scratch_pieces > 0) buffers_.scratch = allocate(static_cast<int64_t>(scratch_pieces) * m_);
    buffers_.scalars = allocate(kScalarCount);
    single_rank_ = layout.ranks == 1;
    x_ = device_vector(m_);
    z_ = device_vector(m_);
    r_ = device_vector(m_);
    d_ = device_vector(m_);
    s_ = device_vector(m_);
    u_ = device_vector(m_);
    ax_ = device_vector(m_);
    ones_product_ = device_vector(m_);

    vector_blocks_ = static_cast<int>(std::clamp<int64_t>(
        (m_ + kVectorThreads - 1) / kVectorThreads, 1, int64_t{4} * multiprocessors_));
    spmv_blocks_ = spmv_blocks_per_multiprocessor() * multiprocessors_;
    symmetric_blocks_ = spmv_symmetric_blocks_per_multiprocessor() * multiprocessors_;
    const int most_blocks = std::max({vector_blocks_, spmv_blocks_, 4 * multiprocessors_});
    partials_ = device_alloc<double>(2 * static_cast<size_t>(most_blocks));
    counter_ = device_alloc<unsigned>(1);
    zero(counter_, sizeof(unsigned));
  }

  ~GpuEngine() override {
    cudaStreamSynchronize(stream_);
    for (cudaGraphExec_t graph : graphs_) cudaGraphExecDestroy(graph);
    if (spmv_buffer_) cudaFree(spmv_buffer_);
    if (matrix_descr_) cusparseDestroySpMat(matrix_descr_);
    if (x_descr_) cusparseDestroyDnVec(x_descr_);
    if (y_descr_) cusparseDestroyDnVec(y_descr_);
    if (cusparse_) cusparseDestroy(cusparse_);
    for (void* block : device_blocks_) cudaFree(block);
    for (double* block : host_blocks_) cudaFreeHost(block);
    for (double* block : owned_) allocator_.release(block);
    cudaStreamDestroy(stream_);
  }

  Device device() const override { return Device::kGpu; }
  const Buffers& buffers() const override { return buffers_; }
  bool fuses_dots() const override { return true; }
  std::string describe() const override {
    std::string kernel;
    switch (spmv_kind_) {
      case SpmvKind::kOwn:
      case SpmvKind::kSlabRows:
      case SpmvKind::kSlabTiles:
        kernel = "slab SpMV (" + std::to_string(slabs_) + (slabs_ == 1 ? " slab" : " slabs") +
                 " of " + std::to_string(slab_width_) + " columns in shared memory, ";
        if (slab_kernel_ == SlabKernel::kTiles) {
          kernel += std::to_string(tiles_) + " tiles of 256 entries, a warp per tile)";
        } else {
          kernel += std::to_string(slab_lanes_) + " lanes per row" +
                    (slab_options_.prefetch ? ", next row prefetched)" : ")");
        }
        kernel += "; " + slab_choice_;
        break;
      case SpmvKind::kCsr:
        kernel = "CSR SpMV (a warp per row)";
        break;
      case SpmvKind::kCusparse:
        kernel = "cuSPARSE CSR SpMV";
        break;
      case SpmvKind::kSymmetric:
        kernel =
            "symmetric SpMV (upper triangle in CSR, a warp per row, transposed terms by double "
            "atomics)";
        break;
      case SpmvKind::kSymmetricTiles:
        kernel = "symmetric slab SpMV (upper triangle in " + std::to_string(slabs_) + " slabs of " +
                 std::to_string(slab_width_) + " columns, " + std::to_string(tiles_) +
                 " tiles of 256 entries, a warp per tile; x's slab and " +
                 "the slab's column sums in shared memory, stored by " + std::to_string(segments_) +
                 " segments of " + std::to_string(tile_blocks_) + " blocks)";
        break;
    }
    return device_label_ + " (" + std::to_string(multiprocessors_) + " SMs), " + kernel +
           (early_launch_ ? ", kernels launched early" : ", kernels launched in turn") +
           (variant() == CgVariant::kClassic
                ? ""
                : std::string(", ") + cg_variant_name(variant()) + " CG") +
           (can_overlap() ? " (NPB: the pair posted, summed during the next SpMV)" : "");
  }

  double spmv_bytes() const override {
    const double vectors = cols_ * 8.0 + rows_ * 8.0;
    switch (spmv_kind_) {
      case SpmvKind::kOwn:
      case SpmvKind::kSlabRows:
      case SpmvKind::kSlabTiles:
        if (slab_kernel_ ==
            SlabKernel::kTiles) {  // 256 entries a tile (padding included): 8 + 2 + 1/8 bytes each
          return tiles_ * (kTileEntries * 10.125 + 4.0) + 2.0 * slabs_ * rows_ * 8.0 + vectors;
        }
        // 16-bit columns, 32-bit offsets per slab, partial y written and read
        return nnz_ * 10.0 + slabs_ * (rows_ + 1) * 4.0 + 2.0 * slabs_ * rows_ * 8.0 + vectors;
      case SpmvKind::kCsr:
        return nnz_ * 12.0 + (rows_ + 1) * 8.0 + vectors;
      case SpmvKind::kCusparse:
        return nnz_ * 12.0 + (rows_ + 1) * 4.0 + vectors;
      case SpmvKind::kSymmetric:
        return nnz_ * 12.0 + (rows_ + 1) * 8.0 + vectors + rows_ * 8.0;  // y zeroed first
      case SpmvKind::kSymmetricTiles:
        // The tiles, the row sums the second kernel reads (written as often), the segments'
        // column sums stored and read, x(i) of the transposed terms (once per row and slab,
        // counted as the row sums).
        return tiles_ * (kTileEntries * 10.125 + 4.0) + 3.0 * symmetric_partials_ * 8.0 +
               2.0 * static_cast<double>(segments_) * slab_width_ * 8.0 + vectors;
    }
    return 0;
  }

  std::string spmv_kernel() const override {
    if (slab_spmv()) return slab_kernel_ == SlabKernel::kTiles ? "slab-tiles" : "slab-rows";
    return spmv_name(spmv_kind_);
  }
  std::string spmv_choice() const override { return slab_choice_; }

  void set_matrix(LocalCsr matrix) override {
    if (spmv_kind_ == SpmvKind::kSymmetric || spmv_kind_ == SpmvKind::kSymmetricTiles)
      matrix = upper_triangle(matrix);
    rows_ = matrix.rows;
    cols_ = matrix.cols;
    nnz_ = matrix.nnz();
    if (spmv_kind_ == SpmvKind::kOwn || spmv_kind_ == SpmvKind::kSlabRows ||
        spmv_kind_ == SpmvKind::kSlabTiles) {
      set_up_slabs(matrix);
    } else if (spmv_kind_ == SpmvKind::kSymmetricTiles) {
      set_up_symmetric_tiles(matrix);
    } else {
      row_ptr_ = upload_array(matrix.row_ptr);
      col_ = upload_array(matrix.col);
      val_ = upload_array(matrix.val);
      if (spmv_kind_ == SpmvKind::kCusparse) set_up_cusparse(matrix);
    }
    // The second p_full of the pipelined steps whose pair travels during the SpMV (set_overlap).
    if (variant() == CgVariant::kPipelined && layout_.partition == Partition::kOneD &&
        !single_rank_ && slab_spmv() && buffers_.p_full_alt == nullptr)
      buffers_.p_full_alt = allocate(layout_.block.cols_padded);
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

  void fill_x(double value) override {
    launch_fill(x_, m_, real_, value, vector_blocks_, stream_);
    if (ones_known_)
      launch_scaled_copy(ax_, ones_product_, value, nullptr, m_, vector_blocks_, stream_);
    ax_known_ = ones_known_;
  }
  void set_x(const std::vector<double>& piece) override {
    std::vector<double> padded(piece);
    padded.resize(m_, 0.0);
    std::fill(padded.begin() + std::min<int64_t>(real_, m_), padded.end(), 0.0);
    check_cuda(
        cudaMemcpyAsync(x_, padded.data(), m_ * sizeof(double), cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    ax_known_ = false;
  }
  void copy_q_to_x() override {
    copy(x_, buffers_.q);
    ax_known_ = false;
  }
  void fill_p(double value) override {
    p_pushed_ = false;
    launch_fill(buffers_.p, m_, real_, value, vector_blocks_, stream_);
  }
  void fill_p_full(double value) override {
    p_pushed_ = false;
    const int64_t n = layout_.block.cols_padded;
    launch_fill(buffers_.p_full, n, n, value, vector_blocks_, stream_);
  }
  void copy_z_to_p() override {
    p_pushed_ = false;
    copy(buffers_.p, z_);
  }

  void cg_begin(bool fuse_dot) override {
    p_pushed_ = false;
    const SumTarget target = sum_into(kRhoLocal);
    launch_cg_begin(x_, z_, r_, buffers_.p, m_, at(kRhoPrevious), fuse_dot ? &target : nullptr,
                    vector_blocks_, stream_);
  }

  // The slab kernel on x = p_full (or the second one), into the slab partials; with `pair`
  // its block 0 collects the posted pair at its end.
  void launch_slabs(const double* x, PairCollect pair = {}) {
    if (slab_kernel_ == SlabKernel::kTiles) {
      TileArgs args{rows_,      cols_,         slabs_,  slab_width_, tiles_,
                    slab_base_, tile_row_,     val_,    slab_col_,   tile_starts_,
                    x,          slab_partial_, p_wait_, pair};
      launch_spmv_tiles(args, tile_blocks_, stream_);
    } else {
      SlabArgs args{rows_,     cols_, slabs_, slab_width_,   slab_base_, slab_row_ptr_,
                    slab_col_, val_,  x,      slab_partial_, p_wait_,    pair};
      launch_spmv_slabs(args, slab_lanes_, slab_options_.prefetch, slab_chunks_, stream_);
    }
  }

  void spmv(bool fuse_dot) override {
    if (spmv_kind_ == SpmvKind::kOwn || spmv_kind_ == SpmvKind::kSlabRows ||
        spmv_kind_ == SpmvKind::kSlabTiles) {
      launch_slabs(buffers_.p_full);
      launch_slab_sum(slab_partial_, slabs_, rows_, buffers_.w, fuse_dot ? buffers_.p : nullptr,
                      single(), sum_into(kDotLocal), piece_fusion_.get(), row_blocks_, stream_);
      return;
    }
    if (spmv_kind_ == SpmvKind::kSymmetricTiles) {
      SymmetricTileArgs args = symmetric_args_;
      args.tiles.x = buffers_.p_full;
      launch_spmv_symmetric_tiles(args, tile_blocks_, stream_);
      launch_symmetric_sum(args, buffers_.w, fuse_dot ? buffers_.p : nullptr, single(),
                           sum_into(kDotLocal), row_blocks_, stream_);
      return;
    }
    if (spmv_kind_ == SpmvKind::kSymmetric) {
      SpmvArgs args{rows_, row_ptr_, col_, val_, buffers_.p_full, buffers_.w, nullptr};
      launch_spmv_symmetric(args, symmetric_blocks_, stream_);
      if (fuse_dot) dot_pq();
      return;
    }
    if (spmv_kind_ == SpmvKind::kCsr) {
      // The CSR kernel forms p.q only: the pair of single-reduction CG follows it.
      const bool own_dot = fuse_dot && !single();
      SpmvArgs args{
          rows_, row_ptr_, col_, val_, buffers_.p_full, buffers_.w, own_dot ? buffers_.p : nullptr};
      launch_spmv(args, sum_into(kDotLocal), spmv_blocks_, stream_);
      if (fuse_dot && !own_dot) dot_pq();
      return;
    }
    const double one = 1.0, zero = 0.0;
    check_cusparse(
        cusparseSpMV(cusparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix_descr_, x_descr_,
                     &zero, y_descr_, CUDA_R_64F, cusparse_algorithm(), spmv_buffer_),
        "cusparseSpMV");
    if (fuse_dot) dot_pq();
  }

  void sum_pieces(int pieces, int own, bool fuse_dot) override {
    const SumTarget target = sum_into(kDotLocal);
    launch_sum_pieces(buffers_.q, buffers_.w, buffers_.scratch, pieces, own, m_, buffers_.p,
                      fuse_dot ? &target : nullptr, w_wait_, single(), vector_blocks_, stream_);
  }
  void dot_pq() override {
    if (single()) {
      launch_dot_pair(buffers_.p, buffers_.q, m_, sum_into(kDotLocal), vector_blocks_, stream_);
    } else {
      launch_dot(buffers_.p, buffers_.q, m_, sum_into(kDotLocal), vector_blocks_, stream_);
    }
  }
  void dot_rr() override {
    const double* r = single() ? buffers_.p : r_;
    launch_dot(r, r, m_, sum_into(kRhoLocal), vector_blocks_, stream_);
  }

  void update_zr(bool fuse_dot) override {
    const SumTarget target = sum_into(kRhoLocal);
    launch_update_zr(step_scalars(), z_, r_, buffers_.p, buffers_.q, m_,
                     fuse_dot ? &target : nullptr, vector_blocks_, stream_);
  }
  void update_p() override {
    p_pushed_ = push_fusion_ != nullptr;
    launch_update_p(step_scalars(), r_, buffers_.p, m_, push_fusion_.get(), vector_blocks_,
                    stream_);
  }
  void keep_ones_product() override {
    copy(ones_product_, buffers_.q);
    ones_known_ = true;
  }
  void pipelined_begin(bool from_q, bool fuse_dot) override {
    if (!from_q && !ax_known_)
      throw std::logic_error(
          "pipelined CG: A x is not known (fill_x after keep_ones_product, or scale_x)");
    p_pushed_ = false;
    parity_ = 0;  // w in p_full
    SumTarget target = sum_into(kDotLocal);
    if (overlap_) target = SumTarget{partials_, counter_, at(kDotLocal)};  // posted, not summed
    launch_pipelined_begin(x_, from_q ? buffers_.q : ax_, pipelined_vectors(), m_, at(kRhoPrevious),
                           fuse_dot || overlap_ ? &target : nullptr,
                           overlap_ ? pair_plan_ : nullptr, vector_blocks_, stream_);
  }

  bool fuse_pair(const ReducePlan* plan) override {
    if (single_rank_) return false;
    pair_plan_ = plan;
    return true;
  }
  bool can_overlap() const {
    return variant() == CgVariant::kPipelined && pair_plan_ != nullptr && push_fusion_ != nullptr &&
           fused_allreduce_ != nullptr && buffers_.p_full_alt != nullptr && slab_spmv();
  }
  bool set_overlap(bool on) override {
    overlap_ = on && can_overlap();
    return overlap_;
  }
  double* p_full_of(int parity) const {
    return parity == 0 ? buffers_.p_full : buffers_.p_full_alt;
  }
  void spmv_partials() override {
    launch_slabs(p_full_of(parity_), PairCollect{pair_plan_, at(kDot)});
  }
  void update_pipelined_overlapped() override {
    const int64_t own = static_cast<int64_t>(layout_.rank) * m_;
    PushFusion fusion = *push_fusion_;
    if (parity_ == 0) std::copy(std::begin(fusion.dst_alt), std::end(fusion.dst_alt), fusion.dst);
    PipelinedVectors v = pipelined_vectors();
    v.w = p_full_of(parity_) + own;
    const PipelinedOverlap o{v,
                             p_full_of(parity_ ^ 1) + own,
                             slab_partial_,
                             slabs_,
                             rows_,
                             pair_plan_,
                             partials_,
                             at(kDotLocal)};
    launch_update_pipelined_overlap(step_scalars(), o, m_, fusion, vector_blocks_, stream_);
    parity_ ^= 1;
    p_pushed_ = true;
  }
  void settle_pipelined() override { launch_settle_pair(pair_plan_, at(kDot), stream_); }
  void update_pipelined(bool fuse_dot) override {
    p_pushed_ = false;  // w's exchange follows the pair's sum (the push kernel)
    const SumTarget target = sum_into(kDotLocal);
    launch_update_pipelined(step_scalars(), counter_, pipelined_vectors(), m_,
                            fuse_dot ? &target : nullptr, vector_blocks_, stream_);
  }
  void dots_pipelined() override {
    // launch_dot_pair(a, b): a.b and a.a, here r.w and r.r.
    launch_dot_pair(r_, buffers_.p, m_, sum_into(kDotLocal), vector_blocks_, stream_);
  }
  void update_single() override {
    p_pushed_ = push_fusion_ != nullptr;
    launch_update_single(step_scalars(), counter_, d_, s_, z_, buffers_.p, buffers_.q, m_,
                         push_fusion_.get(), vector_blocks_, stream_);
  }
  void residual_sum() override {
    launch_distance(x_, buffers_.q, m_, m_, sum_into(kSumLocal), vector_blocks_, stream_);
  }
  void error_sum(double exact) override {
    launch_distance_to(z_, exact, m_, real_, sum_into(kSumLocal), vector_blocks_, stream_);
  }
  void norms() override {
    launch_norms(x_, z_, m_, sum_into(kNormXZLocal), vector_blocks_, stream_);
  }
  void scale_x() override {
    launch_scale(x_, z_, at(kNormZZ), m_, vector_blocks_, stream_);
    if (variant() == CgVariant::kPipelined) {
      launch_scaled_copy(ax_, buffers_.q, 1.0, at(kNormZZ), m_, vector_blocks_, stream_);
      ax_known_ = true;
    }
  }

  double* host_staging(size_t count) override {
    void* block = nullptr;
    check_cuda(cudaMallocHost(&block, std::max<size_t>(count, 1) * sizeof(double)),
               "cudaMallocHost");
    host_blocks_.push_back(static_cast<double*>(block));
    return static_cast<double*>(block);
  }
  void download(double* host, const double* buffer, size_t count) override {
    check_cuda(
        cudaMemcpyAsync(host, buffer, count * sizeof(double), cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void upload(double* buffer, const double* host, size_t count) override {
    // Asynchronous: every staged exchange starts with a download, which waits for this.
    check_cuda(
        cudaMemcpyAsync(buffer, host, count * sizeof(double), cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync");
  }

  double scalar(Scalar which) override {
    double value = 0;
    check_cuda(cudaMemcpyAsync(&value, at(which), sizeof(double), cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return value;
  }
  void synchronize() override {
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  std::unique_ptr<PhaseClock> make_clock() override {
    return std::make_unique<EventPhaseClock>(stream_);
  }

  bool fuse_push(const PushFusion& fusion, const PushWait& wait) override {
    if (single_rank_ || !slab_spmv()) return false;
    push_fusion_ = std::make_unique<PushFusion>(fusion);
    p_wait_ = wait;
    return true;
  }
  bool fuse_reduce(const PieceFusion& fusion, const PushWait& wait) override {
    const bool one_block = layout_.partition == Partition::kOneD || layout_.grid == 1;
    if (single_rank_ || one_block || !slab_spmv()) return false;
    piece_fusion_ = std::make_unique<PieceFusion>(fusion);
    w_wait_ = wait;
    return true;
  }
  bool take_pushed_p() override {
    const bool pushed = p_pushed_;
    p_pushed_ = false;
    return pushed;
  }

  bool fuse_allreduce(const ReducePlan* plan) override {
    if (single_rank_) return false;
    fused_allreduce_ = plan;
    return true;
  }

  int capture_graph(const std::function<void()>& body) override {
    check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture");
    try {
      body();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream_, &broken);
      if (broken) cudaGraphDestroy(broken);
      throw;
    }
    cudaGraph_t graph = nullptr;
    check_cuda(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check_cuda(made, "cudaGraphInstantiate");
    graphs_.push_back(exec);
    return static_cast<int>(graphs_.size()) - 1;
  }
  void launch_graph(int graph) override {
    check_cuda(cudaGraphLaunch(graphs_.at(graph), stream_), "cudaGraphLaunch");
  }

  std::vector<KernelTime> kernel_times(const std::function<void()>& body, int units) override {
    constexpr int kSlots = 8192;
    if (stamp_slots_ == nullptr) {
      stamp_slots_ = device_alloc<KernelSlot>(kSlots);
      device_blocks_.push_back(stamp_slots_);
    }
    set_kernel_stamps(stamp_slots_, kSlots);
    int graph = -1;
    try {
      graph = capture_graph(body);
    } catch (...) {
      set_kernel_stamps(nullptr, 0);
      throw;
    }
    const std::vector<const char*> names = kernel_stamp_names();
    set_kernel_stamps(nullptr, 0);
    const int count = static_cast<int>(names.size());
    for (int unit = 0; unit < units; ++unit) {
      launch_reset_stamps(stamp_slots_, count, stream_);
      launch_graph(graph);
    }
    std::vector<KernelSlot> slots(static_cast<size_t>(count));
    check_cuda(cudaMemcpyAsync(slots.data(), stamp_slots_, slots.size() * sizeof(KernelSlot),
                               cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync");
    synchronize();
    return kernel_launches(names, slots);
  }

 private:
  // Zeroes GPU memory in the engine's stream, complete on return: a plain cudaMemset runs in the
  // legacy stream, unordered with this non-blocking one.
  void zero(void* block, size_t bytes) {
    check_cuda(cudaMemsetAsync(block, 0, bytes, stream_), "cudaMemsetAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

  double* allocate(int64_t count) {
    double* block = allocator_.allocate(static_cast<size_t>(count));
    if (!block)
      throw std::runtime_error("out of GPU memory for " + std::to_string(count) + " doubles");
    owned_.push_back(block);
    zero(block, count * sizeof(double));
    return block;
  }
  double* device_vector(int64_t count) {
    double* block = device_alloc<double>(count);
    device_blocks_.push_back(block);
    zero(block, count * sizeof(double));
    return block;
  }
  template <class T>
  T* upload_array(std::vector<T>& host) {
    T* block = device_alloc<T>(host.size());
    device_blocks_.push_back(block);
    // In the engine's stream and waited for: from pageable memory a cudaMemcpy may return
    // before it lands, unordered with this non-blocking stream.
    check_cuda(cudaMemcpyAsync(block, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice,
                               stream_),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    std::vector<T>().swap(host);
    return block;
  }
  void copy(double* dst, const double* src) {
    check_cuda(cudaMemcpyAsync(dst, src, m_ * sizeof(double), cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpyAsync");
  }
  // A scalar's storage: on a single rank a global value is its local twin.
  double* at(Scalar which) {
    const bool global = which >= kDot && which <= kSum;
    return buffers_.scalars + (single_rank_ && global ? which - kGlobalOffset : which);
  }
  SumTarget sum_into(Scalar local) {
    SumTarget target{partials_, counter_, at(local)};
    if (fused_allreduce_) {
      target.global = at(static_cast<Scalar>(local + kGlobalOffset));
      target.reduce = fused_allreduce_;
    }
    return target;
  }
  PipelinedVectors pipelined_vectors() {
    return PipelinedVectors{z_, r_, buffers_.p, u_, s_, d_, buffers_.q};
  }
  StepScalars step_scalars() {
    return StepScalars{at(kDot), at(kRho), at(kRhoPrevious), at(kAlphaPrevious)};
  }
  bool single() const { return variant() == CgVariant::kSingleReduction; }
  // The slab kernels, which wait for pushed pieces of x and write slab partials.
  bool slab_spmv() const {
    return spmv_kind_ == SpmvKind::kOwn || spmv_kind_ == SpmvKind::kSlabRows ||
           spmv_kind_ == SpmvKind::kSlabTiles;
  }

  cusparseSpMVAlg_t cusparse_algorithm() const { return CUSPARSE_SPMV_CSR_ALG1; }

  // Column slabs as wide as shared memory allows (equal widths, slab_format.h); the slab
  // kernel chosen from the block's statistics (kOwn) or forced, then its format built.
  void set_up_slabs(LocalCsr& matrix) {
    const SlabShape shape = slab_shape(cols_, slab_width_limit());
    slabs_ = shape.slabs;
    slab_width_ = shape.width;
    const SlabStatistics statistics = slab_statistics(matrix, shape);
    SlabKernelChoice choice = choose_slab_kernel(
        statistics, tile_blocks_per_multiprocessor(slab_width_) * multiprocessors_);
    slab_choice_ = "chosen by shape: " + choice.reason;
    if (spmv_kind_ == SpmvKind::kSlabRows || spmv_kind_ == SpmvKind::kSlabTiles) {
      const SlabKernel forced =
          spmv_kind_ == SpmvKind::kSlabRows ? SlabKernel::kRows : SlabKernel::kTiles;
      if (forced == SlabKernel::kTiles && statistics.tiles == 0 && statistics.nnz > 0) {
        throw std::runtime_error("--spmv slab-tiles: " + choice.reason);
      }
      slab_choice_ = std::string("forced by --spmv ") +
                     (forced == SlabKernel::kRows ? "slab-rows" : "slab-tiles") +
                     " (by shape: " + choice.reason + ")";
      choice.kernel = forced;
    }
    slab_kernel_ = choice.kernel;
    row_blocks_ = static_cast<int>(std::clamp<int64_t>(
        (rows_ + kVectorThreads - 1) / kVectorThreads, 1, int64_t{4} * multiprocessors_));
    if (slab_kernel_ == SlabKernel::kTiles) {
      set_up_tiles(matrix, shape);
    } else {
      set_up_slab_rows(matrix);
    }
  }

  // Tiles of 256 entries (slab_format.h); the partial sums of (slab, row) pairs without
  // entries are never written, so they are zeroed here once.
  void set_up_tiles(LocalCsr& matrix, SlabShape shape) {
    TiledSlabs tiles = build_tiled_slabs(matrix, shape, format_threads_);
    matrix = LocalCsr();
    upload_tiles(tiles);
    tile_blocks_ = tile_blocks_per_multiprocessor(slab_width_) * multiprocessors_;
  }

  // The tiles to the GPU, and the slab partials, zeroed.
  void upload_tiles(TiledSlabs& tiles) {
    tiles_ = tiles.tiles;
    slab_base_ = upload_array(tiles.slab_tiles);
    tile_row_ = upload_array(tiles.tile_row);
    val_ = upload_array(tiles.val);
    slab_col_ = upload_array(tiles.col);
    tile_starts_ = upload_array(tiles.starts);
    allocate_slab_partials();
  }

  // The slab partials (slabs x rows), zeroed: the tile kernels leave the pairs without entries
  // unwritten.
  void allocate_slab_partials() {
    const size_t count = static_cast<size_t>(slabs_) * rows_;
    slab_partial_ = device_alloc<double>(count);
    device_blocks_.push_back(slab_partial_);
    zero(slab_partial_, count * sizeof(double));
  }

  // The upper triangle in tiles of slabs half as wide (symmetric_tiles.h), one block per
  // multiprocessor's share of them; the row sums never written stay zero.
  void set_up_symmetric_tiles(LocalCsr& matrix) {
    int device = 0, shared = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
               "cudaDeviceGetAttribute");
    const SlabShape shape = slab_shape(cols_, symmetric_width_limit(shared));
    slabs_ = shape.slabs;
    slab_width_ = shape.width;
    slab_kernel_ = SlabKernel::kTiles;
    TiledSlabs tiles = build_tiled_slabs(matrix, shape, format_threads_);
    matrix = LocalCsr();
    tile_blocks_ = symmetric_tile_blocks_per_multiprocessor(slab_width_) * multiprocessors_;
    TileSegments segments = tile_segments(tiles.slab_tiles, tile_blocks_);
    segments_ = segments.segments();
    symmetric_partials_ = 0;
    for (int64_t i = 0; i < rows_; ++i) symmetric_partials_ += slabs_ - i / slab_width_;
    upload_tiles(tiles);
    double* sums = device_alloc<double>(std::max<size_t>(1, segments_ * slab_width_));
    device_blocks_.push_back(sums);
    zero(sums,
         std::max<size_t>(1, segments_ * slab_width_) * sizeof(double));  // blocks without tiles
    symmetric_args_ = SymmetricTileArgs{
        TileArgs{rows_, cols_, slabs_, slab_width_, tiles_, slab_base_, tile_row_, val_, slab_col_,
                 tile_starts_, nullptr, slab_partial_, PushWait{}, PairCollect{}},
        upload_array(segments.first_block), upload_array(segments.first_segment), sums};
    row_blocks_ = static_cast<int>(std::clamp<int64_t>(
        (rows_ + kVectorThreads - 1) / kVectorThreads, 1, int64_t{4} * multiprocessors_));
  }

  // The row-group kernel's format (slab_format.h, build_row_slabs).
  void set_up_slab_rows(LocalCsr& matrix) {
    // Lanes per row: 16 (batches of 64 entries) up to 64 entries in an average row of a slab,
    // else 32. Measured on classes B and C (61 and 40 entries): 16 lanes with the next row
    // prefetched was fastest; 8 lanes (8 entries each) and 32 were slower (docs/CG.md).
    const double average = static_cast<double>(nnz_) / std::max<int64_t>(1, rows_ * slabs_);
    slab_lanes_ = slab_options_.lanes != 0 ? slab_options_.lanes : average <= 64 ? 16 : 32;
    RowSlabs slabs =
        build_row_slabs(matrix, SlabShape{slabs_, slab_width_}, slab_lanes_, format_threads_);
    matrix = LocalCsr();  // the host copy is no longer needed
    slab_base_ = upload_array(slabs.base);
    slab_row_ptr_ = upload_array(slabs.row_ptr);
    slab_col_ = upload_array(slabs.col);
    val_ = upload_array(slabs.val);
    allocate_slab_partials();
    const int resident = slab_blocks_per_multiprocessor(slab_width_) * multiprocessors_;
    slab_chunks_ = std::max(1, resident / slabs_);
  }

  void set_up_cusparse(const LocalCsr& matrix) {
    if (nnz_ > INT32_MAX)
      throw std::runtime_error("cuSPARSE SpMV here needs fewer than 2^31 nonzeros per rank");
    std::vector<int32_t> row_ptr32(matrix.rows + 1);
    // row_ptr was moved to the device: rebuild the 32-bit offsets there from a host copy.
    std::vector<int64_t> offsets(matrix.rows + 1);
    check_cuda(cudaMemcpy(offsets.data(), row_ptr_, offsets.size() * sizeof(int64_t),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    std::copy(offsets.begin(), offsets.end(), row_ptr32.begin());
    row_ptr32_ = upload_array(row_ptr32);
    check_cusparse(cusparseCreate(&cusparse_), "cusparseCreate");
    check_cusparse(cusparseSetStream(cusparse_, stream_), "cusparseSetStream");
    check_cusparse(cusparseCreateCsr(&matrix_descr_, rows_, matrix.cols, nnz_, row_ptr32_, col_,
                                     val_, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
                   "cusparseCreateCsr");
    check_cusparse(cusparseCreateDnVec(&x_descr_, matrix.cols, buffers_.p_full, CUDA_R_64F),
                   "cusparseCreateDnVec");
    check_cusparse(cusparseCreateDnVec(&y_descr_, rows_, buffers_.w, CUDA_R_64F),
                   "cusparseCreateDnVec");
    const double one = 1.0, zero = 0.0;
    size_t bytes = 0;
    check_cusparse(cusparseSpMV_bufferSize(cusparse_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                           matrix_descr_, x_descr_, &zero, y_descr_, CUDA_R_64F,
                                           cusparse_algorithm(), &bytes),
                   "cusparseSpMV_bufferSize");
    spmv_buffer_ = device_alloc<char>(bytes);
  }

  Layout layout_;
  Allocator allocator_;
  SpmvKind spmv_kind_;
  SlabOptions slab_options_;
  int format_threads_ = 1;
  bool early_launch_ = false;
  KernelSlot* stamp_slots_ = nullptr;  // kernel_times
  int64_t m_;
  int64_t real_;
  int device_ = 0;
  std::string device_label_;
  int multiprocessors_ = 1;
  cudaStream_t stream_ = nullptr;
  Buffers buffers_;
  bool single_rank_ = false;
  double* x_ = nullptr;
  double* z_ = nullptr;
  double* r_ = nullptr;
  double* d_ = nullptr;  // single-reduction CG: the direction and A times it
  double* s_ = nullptr;
  double* u_ = nullptr;             // pipelined CG: A s
  double* ax_ = nullptr;            // pipelined CG: A x where known (ax_known_)
  double* ones_product_ = nullptr;  // A times ones (keep_ones_product)
  bool ax_known_ = false;
  bool ones_known_ = false;
  int vector_blocks_ = 1;
  int spmv_blocks_ = 1;
  int symmetric_blocks_ = 1;
  double* partials_ = nullptr;
  unsigned* counter_ = nullptr;
  const ReducePlan* fused_allreduce_ = nullptr;
  const ReducePlan* pair_plan_ = nullptr;      // fuse_pair: pipelined CG's pair mailbox
  bool overlap_ = false;                       // set_overlap
  int parity_ = 0;                             // set_overlap: w is in p_full (0) or p_full_alt (1)
  std::unique_ptr<PushFusion> push_fusion_;    // --tca-exchange fused: the update of p (or of
  PushWait p_wait_;                            // r, single-reduction) pushes it, and the slab
                                               // SpMV waits for the peers' pieces
  std::unique_ptr<PieceFusion> piece_fusion_;  // fused, 2d: the slab sum pushes w's pieces
  PushWait w_wait_;                            // and sum_pieces waits for the peers' pieces
  bool p_pushed_ = false;                      // the last write of p was a pushing update
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  int64_t nnz_ = 0;
  int slabs_ = 0;
  int slab_width_ = 0;
  int slab_lanes_ = 32;
  int slab_chunks_ = 1;
  int row_blocks_ = 1;
  SlabKernel slab_kernel_ = SlabKernel::kRows;
  std::string slab_choice_;
  int64_t tiles_ = 0;
  int tile_blocks_ = 1;
  int64_t segments_ = 0;           // symmetric tiles: (slab, block) segments
  double symmetric_partials_ = 0;  // symmetric tiles: the row sums the second kernel reads
  SymmetricTileArgs symmetric_args_{};
  int32_t* tile_row_ = nullptr;
  uint8_t* tile_starts_ = nullptr;
  int64_t* slab_base_ = nullptr;
  uint32_t* slab_row_ptr_ = nullptr;
  uint16_t* slab_col_ = nullptr;
  double* slab_partial_ = nullptr;
  int64_t* row_ptr_ = nullptr;
  int32_t* row_ptr32_ = nullptr;
  int32_t* col_ = nullptr;
  double* val_ = nullptr;
  cusparseHandle_t cusparse_ = nullptr;
  cusparseSpMatDescr_t matrix_descr_ = nullptr;
  cusparseDnVecDescr_t x_descr_ = nullptr;
  cusparseDnVecDescr_t y_descr_ = nullptr;
  void* spmv_buffer_ = nullptr;
  std::vector<cudaGraphExec_t> graphs_;
  std::vector<void*> device_blocks_;
  std::vector<double*> host_blocks_;
  std::vector<double*> owned_;
};

}  // namespace

bool gpu_engine_built() { return true; }

std::unique_ptr<Engine> make_gpu_engine(const Layout& layout, const Allocator& allocator,
                                        int scratch_pieces, SpmvKind spmv, const GpuOptions& gpu) {
  return std::make_unique<GpuEngine>(layout, allocator, scratch_pieces, spmv, gpu);
}

Allocator gpu_allocator() {
  return Allocator{
      [](size_t count) -> double* {
        void* block = nullptr;
        if (cudaMalloc(&block, std::max<size_t>(count, 1) * sizeof(double)) != cudaSuccess) {
          cudaGetLastError();
          return nullptr;
        }
        return static_cast<double*>(block);
      },
      [](double* block) { cudaFree(block); }};
}

int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

void select_gpu(int local_rank) {
  const int count = gpu_count();
  if (count == 0) throw std::runtime_error("no usable GPU");
  check_cuda(cudaSetDevice(local_rank % count), "cudaSetDevice");
}

}  // namespace tca_cg
