// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The local half of a collective: copies and element-wise reductions on the memory that holds
// its buffers. The schedule never touches data itself; it asks these. Host memory is served
// by CPU loops here; device memory plugs in as another implementation (a kernel per call).
#pragma once

#include <cstddef>
#include <memory>

#include "tca/tca_coll.h"

namespace tca::coll {

class LocalOps {
 public:
  virtual ~LocalOps() = default;
  virtual tcaResult copy(void* dst, const void* src, size_t bytes) = 0;
  // dst[i] = a[i] op b[i] for i < count; dst may be a (never b).
  virtual tcaResult reduce(void* dst, const void* a, const void* b, size_t count) = 0;
};

// The local operations for buffers of `memory`, reducing `type` with `op`.
tcaResult make_local_ops(tcaMemKind memory, tcaDataType type, tcaRedOp op,
                         std::unique_ptr<LocalOps>* out);
#ifdef TCA_HAVE_CUDA
// GPU memory: a kernel per reduction, device copies (local_ops_gpu.cu).
tcaResult make_device_local_ops(tcaDataType type, tcaRedOp op, std::unique_ptr<LocalOps>* out);
#endif

}  // namespace tca::coll
