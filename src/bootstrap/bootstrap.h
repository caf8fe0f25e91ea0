// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// How ranks find each other at start-up: a few collective byte exchanges. MPI is the first
// implementation; the interface is small so another launcher can replace it.
#pragma once

#include <cstddef>
#include <memory>

#include "bootstrap/call_guard.h"
#include "tca/tca.h"

namespace tca {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // all[r*bytes .. (r+1)*bytes) receives rank r's `mine`.
  virtual tcaResult allgather(const void* mine, void* all, size_t bytes) = 0;
  virtual tcaResult broadcast(void* data, size_t bytes, int root) = 0;
  virtual tcaResult barrier() = 0;
};

// Initializes MPI if the program has not, and finalizes it on destruction in that case (not
// when a rank was found dead: MPI's finalize would wait for it).
tcaResult make_mpi_bootstrap(std::unique_ptr<Bootstrap>* out);

// The guard of this process's MPI calls that involve other ranks (bootstrap/call_guard.h): the
// bootstrap's exchanges and the mpi transport's one-sided calls go through it. Never destroyed.
CallGuard& mpi_guard();
// Starts it where TCA_MPI_GUARD asks (auto: under mpirun --enable-recovery) and MPI allows calls
// from another thread; `liveness` sees a rank's death, `size` is the number of ranks.
tcaResult start_mpi_guard(CallGuard::Liveness liveness, int size, int rank);

}  // namespace tca
