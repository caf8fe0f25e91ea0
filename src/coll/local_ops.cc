// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll/local_ops.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "coll/status.h"

namespace tca::coll {
namespace {

struct Sum {
  template <typename T>
  T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  template <typename T>
  T operator()(T a, T b) const {
    return std::max(a, b);
  }
};
struct Min {
  template <typename T>
  T operator()(T a, T b) const {
    return std::min(a, b);
  }
};

using ReduceFunction = void (*)(void* dst, const void* a, const void* b, size_t count);

template <typename T, typename Op>
void reduce_elements(void* dst, const void* a, const void* b, size_t count) {
  const T* y = static_cast<const T*>(b);
  T* out = static_cast<T*>(dst);
  if (dst == a) {  // the common in-place form, kept alias-free so that it vectorizes
    for (size_t i = 0; i < count; ++i) out[i] = Op{}(out[i], y[i]);
    return;
  }
  const T* x = static_cast<const T*>(a);
  for (size_t i = 0; i < count; ++i) out[i] = Op{}(x[i], y[i]);
}

template <typename T>
ReduceFunction reduce_for_op(tcaRedOp op) {
  switch (op) {
    case TCA_SUM:
      return reduce_elements<T, Sum>;
    case TCA_MAX:
      return reduce_elements<T, Max>;
    case TCA_MIN:
      return reduce_elements<T, Min>;
  }
  return nullptr;
}

ReduceFunction reduce_function(tcaDataType type, tcaRedOp op) {
  switch (type) {
    case TCA_INT32:
      return reduce_for_op<int32_t>(op);
    case TCA_INT64:
      return reduce_for_op<int64_t>(op);
    case TCA_FLOAT:
      return reduce_for_op<float>(op);
    case TCA_DOUBLE:
      return reduce_for_op<double>(op);
  }
  return nullptr;
}

class HostOps final : public LocalOps {
 public:
  explicit HostOps(ReduceFunction reduce) : reduce_(reduce) {}

  tcaResult copy(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return TCA_SUCCESS;
  }
  tcaResult reduce(void* dst, const void* a, const void* b, size_t count) override {
    reduce_(dst, a, b, count);
    return TCA_SUCCESS;
  }

 private:
  ReduceFunction reduce_;
};

}  // namespace

tcaResult make_local_ops(tcaMemKind memory, tcaDataType type, tcaRedOp op,
                         std::unique_ptr<LocalOps>* out) {
  const ReduceFunction reduce = reduce_function(type, op);
  if (reduce == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "unknown data type {} or reduction {}",
             static_cast<int>(type), static_cast<int>(op));
#ifdef TCA_HAVE_CUDA
  if (memory == TCA_MEM_GPU) return make_device_local_ops(type, op, out);
#endif
  if (memory != TCA_MEM_CPU)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED,
             "collectives on memory kind {} need its local operations (copy, reduce), which "
             "this build does not have",
             static_cast<int>(memory));
  *out = std::make_unique<HostOps>(reduce);
  return TCA_SUCCESS;
}

}  // namespace tca::coll
