// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Validation on GPU ranks: the checks of validate_rules.h as kernels over this rank's tuples
// and vertices, against the gathered tree in GPU memory.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/cuda_util.h"
#include "partition.h"
#include "validate.h"

namespace bfs {

class DeviceValidator {
 public:
  DeviceValidator(const Partition& partition, int rank, cudaStream_t stream);

  // Collective. `edges`: this rank's `count` tuples (device), at positions [first_tuple, ...)
  // of the list; `parents` and `levels`: the gathered tree (device, padded entries).
  Validation validate(const Edge* edges, uint64_t count, uint64_t first_tuple, vertex_t root,
                      const int64_t* parents, const int32_t* levels);

 private:
  void tree_levels(vertex_t root, const int64_t* parents);

  Partition partition_;
  int rank_;
  cudaStream_t stream_;
  DeviceArray<int32_t> tree_levels_;       // padded
  DeviceArray<unsigned long long> found_;  // padded bits
  DeviceArray<unsigned long long> verdict_;
  PinnedArray<unsigned long long> verdict_host_;
};

}  // namespace bfs
