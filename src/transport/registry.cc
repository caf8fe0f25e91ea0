// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/registry.h"

#include <cstring>

namespace tca {

tcaResult make_shm_transport(Job&, int, std::vector<std::unique_ptr<Transport>>*);
#ifdef TCA_HAVE_MPI
tcaResult make_mpi_transport(Job&, int, std::vector<std::unique_ptr<Transport>>*);
#endif
#ifdef TCA_HAVE_CUDA
tcaResult make_cuda_transport(Job&, int, std::vector<std::unique_ptr<Transport>>*);
#endif
#ifdef TCA_HAVE_UCX
tcaResult make_ucx_transport(Job&, int, std::vector<std::unique_ptr<Transport>>*);
#endif

const std::vector<TransportEntry>& transport_registry() {
  // Order of preference: the first that reaches a peer for a transfer's memory kinds carries it
  // (unless a calibration chose another by size, or the program named a path).
  static const std::vector<TransportEntry> entries = {
      {"shm", make_shm_transport},  // same host, host memory: loads, stores, cross-memory attach
#ifdef TCA_HAVE_CUDA
      {"cuda", make_cuda_transport},  // same host, a GPU end: copy engines and SMs over CUDA IPC
#endif
#ifdef TCA_HAVE_MPI
      {"mpi", make_mpi_transport},  // anywhere, host memory: MPI one-sided (MPI bootstrap only)
#endif
#ifdef TCA_HAVE_UCX
      {"ucx", make_ucx_transport, true},  // anywhere, host and GPU memory: UCX puts and gets
#endif
  };
  static_assert(kMaxTransports >= 4, "room for every transport of the registry");
  return entries;
}

int transport_id(const char* name) {
  const auto& entries = transport_registry();
  for (size_t i = 0; i < entries.size(); ++i)
    if (std::strcmp(entries[i].name, name) == 0) return static_cast<int>(i);
  return -1;
}

uint32_t handle_record_ids() {
  const auto& entries = transport_registry();
  uint32_t ids = 0;
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].handle_records) ids |= uint32_t{1} << i;
  return ids;
}

}  // namespace tca
