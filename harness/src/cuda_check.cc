// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/cuda_check.h"

#include <string>

#include "tca_harness/check.h"

namespace tca_harness {

void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) die(std::string(call) + ": " + cudaGetErrorString(error));
}

cudaStream_t bench_stream() {
  static const cudaStream_t stream = [] {
    cudaStream_t created = nullptr;
    check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreate");
    return created;
  }();
  return stream;
}

}  // namespace tca_harness
