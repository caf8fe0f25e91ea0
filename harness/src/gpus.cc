// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPUs of the run description (tca_harness::gpu_lister), in CUDA builds. Compiled into each
// program that links tca_harness (an interface source), so that its registration always runs;
// everything here has internal linkage.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "tca_harness/report.h"

namespace {

// Names of the GPUs this process sees (none where CUDA reports no device).
std::vector<std::string> cuda_gpu_names() {
  std::vector<std::string> names;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return names;
  }
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, device) == cudaSuccess)
      names.push_back(properties.name);
  }
  return names;
}

[[maybe_unused]] const bool registered = (tca_harness::gpu_lister = cuda_gpu_names, true);

}  // namespace
