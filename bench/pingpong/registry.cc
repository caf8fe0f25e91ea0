// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Every path of tca-pingpong, in the table's order; the implementations built into this program
// are the only thing decided here.
#include "pingpong.h"

namespace tca_pingpong {

std::vector<Path> all_paths(Endpoint& endpoint) {
  std::vector<Path> paths;
  add_tca_host_paths(endpoint, &paths);
  add_mpi_paths(endpoint, &paths);  // a row, with the reason, where MPI is not built in
  add_memcpy_path(endpoint, &paths);
  add_tca_network_paths(endpoint, &paths);
#ifdef TCA_BENCH_UCX
  add_ucx_paths(endpoint, &paths);
#endif
#ifdef TCA_HARNESS_CUDA
  add_tca_gpu_paths(endpoint, &paths);
#ifdef TCA_HARNESS_NCCL
  add_nccl_paths(endpoint, &paths);
#endif
#endif
  return paths;
}

#ifndef TCA_HARNESS_CUDA
void allocate_gpu_buffers(Endpoint* /*endpoint*/, size_t /*bytes*/) {}  // no GPU paths
#endif

}  // namespace tca_pingpong
