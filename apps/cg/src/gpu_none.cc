// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A build without CUDA: the GPU engine cannot be made, and the program says so.
#include <stdexcept>

#include "engine.h"

namespace tca_cg {

bool gpu_engine_built() { return false; }

std::unique_ptr<Engine> make_gpu_engine(const Layout&, const Allocator&, int, SpmvKind,
                                        const GpuOptions&) {
  throw std::runtime_error("--device gpu: this build of tca-cg has no CUDA");
}

Allocator gpu_allocator() {
  throw std::runtime_error("--device gpu: this build of tca-cg has no CUDA");
}

int gpu_count() { return 0; }

void select_gpu(int) { throw std::runtime_error("--device gpu: this build of tca-cg has no CUDA"); }

}  // namespace tca_cg
