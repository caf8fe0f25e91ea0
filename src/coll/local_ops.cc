// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll/local_ops.h"

#include <cstring>

#include "coll/status.h"
#include "tca/detail/reduce_ops.h"

namespace tca::coll {
namespace {

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

ReduceFunction reduce_function(tcaDataType type, tcaRedOp op) {
  ReduceFunction reduce = nullptr;
  tca_reduce::with_type(type, [&](auto element) {
    tca_reduce::with_op(op, [&](auto operation) {
      reduce = reduce_elements<decltype(element), decltype(operation)>;
    });
  });
  return reduce;
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
