// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/*
 * The element-wise reductions of collectives, defined once for the host loops
 * (src/coll/local_ops.cc), the per-call kernels (src/coll/local_ops_gpu.cu) and the GPU
 * programs (tca/tca_coll_device.cuh). Not an API: included by those only. Types and
 * operations are tcaDataType and tcaRedOp values.
 */
#ifndef TCA_DETAIL_REDUCE_OPS_H
#define TCA_DETAIL_REDUCE_OPS_H

#include <stdint.h>

#include "tca/tca_coll.h"

#ifdef __cplusplus
#ifdef __CUDACC__
#define TCA_REDUCE_INLINE __host__ __device__ __forceinline__
/* The dispatchers call whatever the caller passes: host code or device code. */
#define TCA_REDUCE_ANY_CALLEE _Pragma("nv_exec_check_disable")
#define TCA_REDUCE_DISPATCH __host__ __device__ __forceinline__
#else
#define TCA_REDUCE_INLINE inline
#define TCA_REDUCE_ANY_CALLEE
#define TCA_REDUCE_DISPATCH inline
#endif

namespace tca_reduce {

struct Sum {
  template <typename T>
  TCA_REDUCE_INLINE T operator()(T a, T b) const {
    return a + b;
  }
};
// As std::max and std::min: a, unless b lies strictly beyond it.
struct Max {
  template <typename T>
  TCA_REDUCE_INLINE T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};
struct Min {
  template <typename T>
  TCA_REDUCE_INLINE T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};

// a op b for an operation known only at run time (anything unknown sums).
template <typename T>
TCA_REDUCE_INLINE T combine(uint32_t op, T a, T b) {
  switch (op) {
    case TCA_MAX:
      return Max{}(a, b);
    case TCA_MIN:
      return Min{}(a, b);
    default:
      return Sum{}(a, b);
  }
}

// Calls f with a value of the element type of `type`; false (f not called) when unknown.
TCA_REDUCE_ANY_CALLEE
template <typename F>
TCA_REDUCE_DISPATCH bool with_type(uint32_t type, F&& f) {
  switch (type) {
    case TCA_INT32:
      f(int32_t{});
      return true;
    case TCA_INT64:
      f(int64_t{});
      return true;
    case TCA_FLOAT:
      f(float{});
      return true;
    case TCA_DOUBLE:
      f(double{});
      return true;
  }
  return false;
}

// Calls f with the functor of `op` (Sum, Max, Min); false (f not called) when unknown.
TCA_REDUCE_ANY_CALLEE
template <typename F>
TCA_REDUCE_DISPATCH bool with_op(uint32_t op, F&& f) {
  switch (op) {
    case TCA_SUM:
      f(Sum{});
      return true;
    case TCA_MAX:
      f(Max{});
      return true;
    case TCA_MIN:
      f(Min{});
      return true;
  }
  return false;
}

}  // namespace tca_reduce

#undef TCA_REDUCE_INLINE
#undef TCA_REDUCE_DISPATCH
#undef TCA_REDUCE_ANY_CALLEE
#endif /* __cplusplus */

#endif /* TCA_DETAIL_REDUCE_OPS_H */
