#include <cuda_runtime.h>

#include <algorithm>

#include "gpu_kernels.cuh"

namespace tca_cg {
namespace {

__device__ __forceinline__ double warp_sum(double value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}

// The block's sum of `value` (every thread's), valid in thread 0.
template <int kThreads>
__device__ __forceinline__ double block_sum(double value, double* shared) {
  value = warp_sum(value);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  double total = 0.0;
  if (warp == 0) {
    total = lane < kThreads / 32 ? shared[lane] : 0.0;
    total = warp_sum(total);
  }
  __syncthreads();
  return total;
}

// Every thread passes its values; the block's sums become partials, and the last block adds
// the partials of all blocks in block order into sum.out.
template <int kThreads, int kWidth>
__device__ void finish_sums(const double (&values)[kWidth], SumTarget sum) {
  __shared__ double shared[kThreads / 32];
  __shared__ bool last;
  double totals[kWidth];
#pragma unroll
  for (int w = 0; w < kWidth; ++w) totals[w] = block_sum<kThreads>(values[w], shared);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int w = 0; w < kWidth; ++w) sum.partials[blockIdx.x * kWidth + w] = totals[w];
    __threadfence();
    last = atomicAdd(sum.counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
#pragma unroll
  for (int w = 0; w < kWidth; ++w) {
    double part = 0.0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) part += __ldcg(sum.partials + b * kWidth + w);
    const double total = block_sum<kThreads>(part, shared);
    if (threadIdx.x == 0) sum.out[w] = total;
  }
  if (threadIdx.x == 0) *sum.counter = 0;
}

// One warp per row (rows strided over the grid's warps); each lane takes every 32nd entry,
// four at a time so that each warp keeps 1.5 KiB of the matrix in flight. The matrix is read
// once (streaming loads), x through the read-only cache.
template <bool kDot>
__global__ void __launch_bounds__(kSpmvThreads) spmv_kernel(SpmvArgs a, SumTarget sum) {
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
    finish_sums<kSpmvThreads, 1>(values, sum);
  }
}

// Rows are handed out in rounds (round r: row r0 + r*groups + group) so that every lane of a
// warp runs the same number of rounds and meets the shuffles. Each lane keeps up to four
// entries in flight; the next row's offsets are loaded before the current row is summed.
template <int kLanes>
__global__ void __launch_bounds__(kSlabThreads, 1) spmv_slab_kernel(SlabArgs a) {
  extern __shared__ double xs[];
  const int slab = blockIdx.x % a.slabs;
  const int chunk = blockIdx.x / a.slabs;
  const int chunks = gridDim.x / a.slabs;
  const int64_t first_col = static_cast<int64_t>(slab) * a.width;
  const int width = static_cast<int>(min(static_cast<int64_t>(a.width), a.cols - first_col));
  for (int i = threadIdx.x; i < width; i += blockDim.x) xs[i] = a.x[first_col + i];
  __syncthreads();

  const int64_t r0 = a.rows * chunk / chunks, r1 = a.rows * (chunk + 1) / chunks;
  constexpr int kGroups = kSlabThreads / kLanes;
  const int group = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const uint32_t* rp = a.row_ptr + static_cast<int64_t>(slab) * (a.rows + 1);
  const int64_t base = a.slab_base[slab];
  const uint16_t* col = a.col + base;
  const double* val = a.val + base;
  double* out = a.partial + static_cast<int64_t>(slab) * a.rows;
  const int64_t rounds = (r1 - r0 + kGroups - 1) / kGroups;

  int64_t row = r0 + group;
  uint32_t begin = 0, end = 0;
  if (row < r1) {
    begin = __ldg(rp + row);
    end = __ldg(rp + row + 1);
  }
  for (int64_t round = 0; round < rounds; ++round) {
    const int64_t next = row + kGroups;
    uint32_t next_begin = 0, next_end = 0;
    if (next < r1) {
      next_begin = __ldg(rp + next);
      next_end = __ldg(rp + next + 1);
    }
    double s = 0.0;
    for (uint32_t k = begin + lane; k < end; k += 4 * kLanes) {
      double v[4];
      uint32_t c[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint32_t kk = k + j * kLanes;
        const bool inside = kk < end;
        v[j] = inside ? __ldcs(val + kk) : 0.0;
        c[j] = inside ? __ldcs(col + kk) : 0u;
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) s += v[j] * xs[c[j]];
    }
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset, kLanes);
    if (lane == 0 && row < r1) out[row] = s;
    row = next;
    begin = next_begin;
    end = next_end;
  }
}

template <bool kDot>
__global__ void __launch_bounds__(kVectorThreads)
    slab_sum_kernel(const double* partial, int slabs, int64_t rows, double* y, const double* p_own, SumTarget sum) {
  double dot = 0.0;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double s = 0.0;
    for (int k = 0; k < slabs; ++k) s += partial[k * rows + row];
    y[row] = s;
    if (kDot) dot += s * p_own[row];
  }
  if (kDot) {
    const double values[1] = {dot};
    finish_sums<kVectorThreads, 1>(values, sum);
  }
}

__device__ __forceinline__ int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

__global__ void fill_kernel(double* v, int64_t n, int64_t real, double value) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) v[i] = i < real ? value : 0.0;
}

template <bool kDot>
__global__ void __launch_bounds__(kVectorThreads)
    cg_begin_kernel(const double* x, double* z, double* r, double* p, int64_t n, SumTarget sum) {
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
    finish_sums<kVectorThreads, 1>(values, sum);
  }
}

__global__ void __launch_bounds__(kVectorThreads)
    dot_kernel(const double* a, const double* b, int64_t n, SumTarget sum) {
  double s = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) s += a[i] * b[i];
  const double values[1] = {s};
  finish_sums<kVectorThreads, 1>(values, sum);
}

template <bool kDot>
__global__ void __launch_bounds__(kVectorThreads)
    update_zr_kernel(StepScalars scalars, double* z, double* r, const double* p, const double* q,
                     int64_t n, SumTarget sum) {
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
    finish_sums<kVectorThreads, 1>(values, sum);
  }
}

__global__ void update_p_kernel(StepScalars scalars, const double* r, double* p, int64_t n) {
  const double beta = *scalars.rho / *scalars.rho_previous;
  for (int64_t i = first_index(); i < n; i += grid_stride()) p[i] = r[i] + beta * p[i];
}

__global__ void __launch_bounds__(kVectorThreads)
    distance_kernel(const double* a, const double* b, int64_t n, int64_t real, SumTarget sum) {
  double s = 0.0;
  for (int64_t i = first_index(); i < n && i < real; i += grid_stride()) {
    const double d = a[i] - b[i];
    s += d * d;
  }
  const double values[1] = {s};
  finish_sums<kVectorThreads, 1>(values, sum);
}

__global__ void __launch_bounds__(kVectorThreads)
    distance_to_kernel(const double* a, double value, int64_t n, int64_t real, SumTarget sum) {
  double s = 0.0;
  for (int64_t i = first_index(); i < n && i < real; i += grid_stride()) {
    const double d = a[i] - value;
    s += d * d;
  }
  const double values[1] = {s};
  finish_sums<kVectorThreads, 1>(values, sum);
}

__global__ void __launch_bounds__(kVectorThreads)
    norms_kernel(const double* x, const double* z, int64_t n, SumTarget sum) {
  double xz = 0.0, zz = 0.0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    xz += x[i] * z[i];
    zz += z[i] * z[i];
  }
  const double values[2] = {xz, zz};
  finish_sums<kVectorThreads, 2>(values, sum);
}

__global__ void scale_kernel(double* x, const double* z, const double* zz, int64_t n) {
  const double scale = 1.0 / sqrt(*zz);
  for (int64_t i = first_index(); i < n; i += grid_stride()) x[i] = scale * z[i];
}

__global__ void sum_pieces_kernel(double* q, const double* w, const double* scratch, int pieces,
                                  int own, int64_t m) {
  for (int64_t i = first_index(); i < m; i += grid_stride()) {
    double s = 0.0;
    for (int k = 0; k < pieces; ++k) s += (k == own ? w : scratch)[k * m + i];
    q[i] = s;
  }
}

}  // namespace

void launch_spmv(const SpmvArgs& args, SumTarget sum, int blocks, cudaStream_t stream) {
  if (args.p_own) {
    spmv_kernel<true><<<blocks, kSpmvThreads, 0, stream>>>(args, sum);
  } else {
    spmv_kernel<false><<<blocks, kSpmvThreads, 0, stream>>>(args, sum);
  }
}

void launch_spmv_slabs(const SlabArgs& args, int lanes, int chunks, cudaStream_t stream) {
  const size_t shared = static_cast<size_t>(args.width) * sizeof(double);
  const int blocks = args.slabs * chunks;
  if (lanes == 8) {
    spmv_slab_kernel<8><<<blocks, kSlabThreads, shared, stream>>>(args);
  } else if (lanes == 16) {
    spmv_slab_kernel<16><<<blocks, kSlabThreads, shared, stream>>>(args);
  } else {
    spmv_slab_kernel<32><<<blocks, kSlabThreads, shared, stream>>>(args);
  }
}

int slab_blocks_per_multiprocessor(int width) {
  const int shared = width * static_cast<int>(sizeof(double));
  cudaFuncSetAttribute(spmv_slab_kernel<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
  cudaFuncSetAttribute(spmv_slab_kernel<16>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
  cudaFuncSetAttribute(spmv_slab_kernel<32>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spmv_slab_kernel<32>, kSlabThreads, shared);
  return std::max(1, blocks);
}

int slab_width_limit() {
  int device = 0, bytes = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  const int width = (bytes / static_cast<int>(sizeof(double))) / 32 * 32;
  return std::clamp(width, 32, 65536);
}

void launch_slab_sum(const double* partial, int slabs, int64_t rows, double* y, const double* p_own,
                     SumTarget sum, int blocks, cudaStream_t stream) {
  if (p_own) {
    slab_sum_kernel<true><<<blocks, kVectorThreads, 0, stream>>>(partial, slabs, rows, y, p_own, sum);
  } else {
    slab_sum_kernel<false><<<blocks, kVectorThreads, 0, stream>>>(partial, slabs, rows, y, p_own, sum);
  }
}

int spmv_blocks_per_multiprocessor() {
  int with_dot = 0, without = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&with_dot, spmv_kernel<true>, kSpmvThreads, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&without, spmv_kernel<false>, kSpmvThreads, 0);
  return std::max(1, std::min(with_dot, without));
}

void launch_fill(double* v, int64_t n, int64_t real, double value, int blocks, cudaStream_t stream) {
  fill_kernel<<<blocks, kVectorThreads, 0, stream>>>(v, n, real, value);
}

void launch_cg_begin(const double* x, double* z, double* r, double* p, int64_t n,
                     const SumTarget* sum, int blocks, cudaStream_t stream) {
  if (sum) {
    cg_begin_kernel<true><<<blocks, kVectorThreads, 0, stream>>>(x, z, r, p, n, *sum);
  } else {
    cg_begin_kernel<false><<<blocks, kVectorThreads, 0, stream>>>(x, z, r, p, n, SumTarget{});
  }
}

void launch_dot(const double* a, const double* b, int64_t n, SumTarget sum, int blocks,
                cudaStream_t stream) {
  dot_kernel<<<blocks, kVectorThreads, 0, stream>>>(a, b, n, sum);
}

void launch_update_zr(StepScalars scalars, double* z, double* r, const double* p, const double* q,
                      int64_t n, const SumTarget* sum, int blocks, cudaStream_t stream) {
  if (sum) {
    update_zr_kernel<true><<<blocks, kVectorThreads, 0, stream>>>(scalars, z, r, p, q, n, *sum);
  } else {
    update_zr_kernel<false><<<blocks, kVectorThreads, 0, stream>>>(scalars, z, r, p, q, n, SumTarget{});
  }
}

void launch_update_p(StepScalars scalars, const double* r, double* p, int64_t n, int blocks,
                     cudaStream_t stream) {
  update_p_kernel<<<blocks, kVectorThreads, 0, stream>>>(scalars, r, p, n);
}

void launch_distance(const double* a, const double* b, int64_t n, int64_t real, SumTarget sum,
                     int blocks, cudaStream_t stream) {
  distance_kernel<<<blocks, kVectorThreads, 0, stream>>>(a, b, n, real, sum);
}

void launch_distance_to(const double* a, double value, int64_t n, int64_t real, SumTarget sum,
                        int blocks, cudaStream_t stream) {
  distance_to_kernel<<<blocks, kVectorThreads, 0, stream>>>(a, value, n, real, sum);
}

void launch_norms(const double* x, const double* z, int64_t n, SumTarget sum, int blocks,
                  cudaStream_t stream) {
  norms_kernel<<<blocks, kVectorThreads, 0, stream>>>(x, z, n, sum);
}

void launch_scale(double* x, const double* z, const double* zz, int64_t n, int blocks,
                  cudaStream_t stream) {
  scale_kernel<<<blocks, kVectorThreads, 0, stream>>>(x, z, zz, n);
}

void launch_sum_pieces(double* q, const double* w, const double* scratch, int pieces, int own,
                       int64_t m, int blocks, cudaStream_t stream) {
  sum_pieces_kernel<<<blocks, kVectorThreads, 0, stream>>>(q, w, scratch, pieces, own, m);
}

}  // namespace tca_cg
