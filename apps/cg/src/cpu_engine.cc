// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The CPU engine: vectors in host memory, every operation split over the rank's threads.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine.h"
#include "symmetric.h"
#include "threads.h"

namespace tca_cg {
namespace {

class CpuEngine final : public Engine {
 public:
  CpuEngine(const Layout& layout, const Allocator& allocator, int scratch_pieces, int threads,
            SpmvKind spmv)
      : symmetric_(spmv == SpmvKind::kSymmetric),
        layout_(layout),
        allocator_(allocator),
        threads_(threads < 1 ? 1 : threads),
        m_(layout.piece),
        real_(layout.own_count()),
        x_(m_, 0.0),
        z_(m_, 0.0),
        r_(m_, 0.0),
        d_(m_, 0.0),
        s_(m_, 0.0),
        u_(m_, 0.0),
        ax_(m_, 0.0),
        ones_product_(m_, 0.0) {
    const bool one_d = layout.partition == Partition::kOneD || layout.grid == 1;
    buffers_.p_full = allocate(layout.block.cols_padded);
    buffers_.p = one_d ? buffers_.p_full + layout.rank * m_ : allocate(m_);
    buffers_.q = allocate(m_);
    buffers_.w = one_d ? buffers_.q : allocate(layout.block.rows_padded);
    if (scratch_pieces > 0) buffers_.scratch = allocate(static_cast<size_t>(scratch_pieces) * m_);
    buffers_.scalars = allocate(kScalarCount);
    single_rank_ = layout.ranks == 1;
  }

  ~CpuEngine() override {
    for (double* block : owned_) allocator_.release(block);
  }

  Device device() const override { return Device::kCpu; }
  const Buffers& buffers() const override { return buffers_; }
  bool fuses_dots() const override { return false; }
  std::string describe() const override {
    return std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads") +
           (symmetric_ ? ", symmetric storage (upper triangle, CSR)" : ", CSR") +
           (variant() == CgVariant::kClassic
                ? ""
                : std::string(", ") + cg_variant_name(variant()) + " CG");
  }

  // Symmetric: every part also writes and reads its copy of y.
  double spmv_bytes() const override {
    const double copies = symmetric_ ? 2.0 * threads_ * a_.rows * 8.0 : 0.0;
    return a_.nnz() * 12.0 + (a_.rows + 1) * 8.0 + a_.rows * 8.0 + a_.cols * 8.0 + copies;
  }

  void set_matrix(LocalCsr matrix) override {
    a_ = symmetric_ ? upper_triangle(matrix) : std::move(matrix);
  }

  void fill_x(double value) override {
    for_each([&](int64_t i) {
      x_[i] = i < real_ ? value : 0.0;
      ax_[i] = value * ones_product_[i];
    });
    ax_known_ = ones_known_;
  }
  void set_x(const std::vector<double>& piece) override {
    for_each([&](int64_t i) { x_[i] = i < real_ ? piece[i] : 0.0; });
    ax_known_ = false;
  }
  void copy_q_to_x() override {
    const double* q = buffers_.q;
    for_each([&](int64_t i) { x_[i] = q[i]; });
    ax_known_ = false;
  }
  void fill_p_full(double value) override {
    std::fill(buffers_.p_full, buffers_.p_full + layout_.block.cols_padded, value);
  }
  void fill_p(double value) override {
    double* p = buffers_.p;
    for_each([&](int64_t i) { p[i] = i < real_ ? value : 0.0; });
  }
  void copy_z_to_p() override {
    double* p = buffers_.p;
    for_each([&](int64_t i) { p[i] = z_[i]; });
  }

  void cg_begin(bool fuse_dot) override {
    double* p = buffers_.p;
    for_each([&](int64_t i) {
      z_[i] = 0.0;
      r_[i] = x_[i];
      p[i] = r_[i];
    });
    at(kRhoPrevious) = 0.0;
    at(kAlphaPrevious) = 0.0;
    if (fuse_dot) dot_rr();
  }

  void spmv(bool fuse_dot) override {
    const double* x = buffers_.p_full;
    double* y = buffers_.w;
    if (symmetric_) {
      symmetric_multiply(a_, x, y, threads_, symmetric_scratch_);
      if (fuse_dot) dot_pq();
      return;
    }
    const int64_t* row_ptr = a_.row_ptr.data();
    const int32_t* col = a_.col.data();
    const double* val = a_.val.data();
    parallel_ranges(a_.rows, threads_, [&](int64_t begin, int64_t end, int) {
      for (int64_t row = begin; row < end; ++row) {
        double sum = 0.0;
        for (int64_t k = row_ptr[row]; k < row_ptr[row + 1]; ++k) sum = sum + val[k] * x[col[k]];
        y[row] = sum;
      }
    });
    if (fuse_dot) dot_pq();
  }

  void sum_pieces(int pieces, int own, bool fuse_dot) override {
    double* q = buffers_.q;
    const double* w = buffers_.w;
    const double* scratch = buffers_.scratch;
    const int64_t m = m_;
    for_each([&](int64_t i) {
      double sum = 0.0;
      for (int k = 0; k < pieces; ++k) sum += k == own ? w[k * m + i] : scratch[k * m + i];
      q[i] = sum;
    });
    if (fuse_dot) dot_pq();
  }

  void dot_pq() override {
    const double* p = buffers_.p;
    const double* q = buffers_.q;
    at(kDotLocal) = sum([&](int64_t i) { return p[i] * q[i]; });
    if (variant() == CgVariant::kSingleReduction) dot_rr();
  }
  void dot_rr() override {
    const double* r = variant() == CgVariant::kSingleReduction ? buffers_.p : r_.data();
    at(kRhoLocal) = sum([&](int64_t i) { return r[i] * r[i]; });
  }

  void update_zr(bool fuse_dot) override {
    const double alpha = at(kRho) / at(kDot);
    at(kRhoPrevious) = at(kRho);
    const double* p = buffers_.p;
    const double* q = buffers_.q;
    for_each([&](int64_t i) {
      z_[i] = z_[i] + alpha * p[i];
      r_[i] = r_[i] - alpha * q[i];
    });
    if (fuse_dot) dot_rr();
  }

  void update_p() override {
    const double beta = at(kRho) / at(kRhoPrevious);
    double* p = buffers_.p;
    for_each([&](int64_t i) { p[i] = r_[i] + beta * p[i]; });
  }

  void keep_ones_product() override {
    const double* q = buffers_.q;
    for_each([&](int64_t i) { ones_product_[i] = q[i]; });
    ones_known_ = true;
  }
  void pipelined_begin(bool from_q, bool fuse_dot) override {
    if (!from_q && !ax_known_)
      throw std::logic_error(
          "pipelined CG: A x is not known (fill_x after keep_ones_product, or scale_x)");
    double* w = buffers_.p;
    const double* ax = from_q ? buffers_.q : ax_.data();
    for_each([&](int64_t i) {
      z_[i] = 0.0;
      r_[i] = x_[i];
      w[i] = ax[i];
      d_[i] = s_[i] = u_[i] = 0.0;
    });
    at(kRhoPrevious) = 0.0;
    at(kAlphaPrevious) = 0.0;
    if (fuse_dot) dots_pipelined();
  }
  void update_pipelined(bool fuse_dot) override {
    const Coefficients c = coefficients();
    double* w = buffers_.p;
    const double* q = buffers_.q;
    for_each([&](int64_t i) {
      u_[i] = q[i] + c.beta * u_[i];
      s_[i] = w[i] + c.beta * s_[i];
      d_[i] = r_[i] + c.beta * d_[i];
      z_[i] = z_[i] + c.alpha * d_[i];
      r_[i] = r_[i] - c.alpha * s_[i];
      w[i] = w[i] - c.alpha * u_[i];
    });
    if (fuse_dot) dots_pipelined();
  }
  void dots_pipelined() override {
    const double* w = buffers_.p;
    at(kDotLocal) = sum([&](int64_t i) { return w[i] * r_[i]; });
    at(kRhoLocal) = sum([&](int64_t i) { return r_[i] * r_[i]; });
  }
  void update_single() override {
    const Coefficients c = coefficients();
    double* r = buffers_.p;
    const double* w = buffers_.q;
    for_each([&](int64_t i) {
      d_[i] = c.first ? r[i] : r[i] + c.beta * d_[i];
      s_[i] = c.first ? w[i] : w[i] + c.beta * s_[i];
      z_[i] = z_[i] + c.alpha * d_[i];
      r[i] = r[i] - c.alpha * s_[i];
    });
  }

  void residual_sum() override {
    const double* q = buffers_.q;
    at(kSumLocal) = sum([&](int64_t i) {
      const double d = x_[i] - q[i];
      return d * d;
    });
  }
  void error_sum(double exact) override {
    at(kSumLocal) = sum([&](int64_t i) {
      const double d = i < real_ ? z_[i] - exact : 0.0;
      return d * d;
    });
  }
  void norms() override {
    at(kNormXZLocal) = sum([&](int64_t i) { return x_[i] * z_[i]; });
    at(kNormZZLocal) = sum([&](int64_t i) { return z_[i] * z_[i]; });
  }
  void scale_x() override {
    const double scale = 1.0 / std::sqrt(at(kNormZZ));
    for_each([&](int64_t i) { x_[i] = scale * z_[i]; });
    if (variant() == CgVariant::kPipelined) {
      const double* q = buffers_.q;
      for_each([&](int64_t i) { ax_[i] = scale * q[i]; });
      ax_known_ = true;
    }
  }

  double* host_staging(size_t count) override {
    staging_.emplace_back(count, 0.0);
    return staging_.back().data();
  }
  void download(double* host, const double* buffer, size_t count) override {
    std::copy(buffer, buffer + count, host);
  }
  void upload(double* buffer, const double* host, size_t count) override {
    std::copy(host, host + count, buffer);
  }

  double scalar(Scalar which) override { return at(which); }
  void synchronize() override {}
  std::unique_ptr<PhaseClock> make_clock() override { return std::make_unique<HostPhaseClock>(); }

 private:
  double* allocate(int64_t count) {
    double* block = allocator_.allocate(static_cast<size_t>(count));
    if (!block) throw std::runtime_error("out of memory for " + std::to_string(count) + " doubles");
    owned_.push_back(block);
    std::fill(block, block + count, 0.0);
    return block;
  }
  // Single-reduction and pipelined CG: the step's coefficients from the pair's sum (gamma =
  // kRho, delta = kDot) and the previous step's; this step's become the previous ones.
  struct Coefficients {
    double alpha;
    double beta;
    bool first;
  };
  Coefficients coefficients() {
    const double gamma = at(kRho);
    Coefficients c;
    c.first = at(kRhoPrevious) == 0.0;
    c.beta = c.first ? 0.0 : gamma / at(kRhoPrevious);
    c.alpha = c.first ? gamma / at(kDot) : gamma / (at(kDot) - c.beta * gamma / at(kAlphaPrevious));
    // r = 0 (solved exactly, as a step of the identity does): nothing left to move; 0 / 0 would
    // fill every vector with NaN.
    if (gamma == 0.0) c.alpha = c.beta = 0.0;
    at(kRhoPrevious) = gamma;
    at(kAlphaPrevious) = c.alpha;
    return c;
  }
  // A scalar's storage: on a single rank a global value is its local twin.
  double& at(Scalar which) {
    const bool global = which >= kDot && which <= kSum;
    return buffers_.scalars[single_rank_ && global ? which - kGlobalOffset : which];
  }

  template <class Fn>
  void for_each(Fn&& fn) {
    parallel_ranges(m_, threads_, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) fn(i);
    });
  }
  template <class Term>
  double sum(Term&& term) {
    return parallel_sum(m_, threads_, term);
  }

  bool symmetric_;
  Layout layout_;
  Allocator allocator_;
  int threads_;
  int64_t m_;
  int64_t real_;
  std::vector<double> x_, z_, r_;
  std::vector<double> d_, s_;         // single-reduction CG: the direction and A times it
  std::vector<double> u_;             // pipelined CG: A s
  std::vector<double> ax_;            // pipelined CG: A x where known (ax_known_)
  std::vector<double> ones_product_;  // A times ones (keep_ones_product)
  bool ax_known_ = false;
  bool ones_known_ = false;
  LocalCsr a_;
  Buffers buffers_;
  std::vector<double*> owned_;
  std::vector<std::vector<double>> staging_;
  std::vector<double> symmetric_scratch_;
  bool single_rank_ = false;
};

}  // namespace

const char* device_name(Device device) { return device == Device::kCpu ? "cpu" : "gpu"; }

const char* cg_variant_name(CgVariant variant) {
  switch (variant) {
    case CgVariant::kClassic:
      return "classic";
    case CgVariant::kSingleReduction:
      return "single-reduction";
    case CgVariant::kPipelined:
      break;
  }
  return "pipelined";
}

std::unique_ptr<Engine> make_cpu_engine(const Layout& layout, const Allocator& allocator,
                                        int scratch_pieces, int threads, SpmvKind spmv) {
  return std::make_unique<CpuEngine>(layout, allocator, scratch_pieces, threads, spmv);
}

}  // namespace tca_cg
