// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// How ranks find each other at start-up, and the few collective byte exchanges tca needs for
// set-up and control: MPI (bootstrap/mpi_bootstrap.cc, where built), PMIx (pmix_bootstrap.cc,
// where built), tca's own sockets (tcp_bootstrap.h) or a job of one rank. make_bootstrap
// chooses one as TCA_BOOTSTRAP says (bootstrap/choose.cc). No data path goes through these.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "bootstrap/call_guard.h"
#include "tca/tca.h"

namespace tca {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* name() const = 0;  // "mpi", "pmix", "tcp", "single"
  // Why it was chosen, in words (TCA_DEBUG=info, tca-topo, tcaBootstrapInfo).
  const std::string& reason() const { return reason_; }
  void set_reason(std::string reason) { reason_ = std::move(reason); }
  // The bound on one exchange's waits, where the bootstrap has one (tcaSetTimeout follows).
  virtual void set_timeout_ms(int) {}
  // all[r*bytes .. (r+1)*bytes) receives rank r's `mine`.
  virtual tcaResult allgather(const void* mine, void* all, size_t bytes) = 0;
  virtual tcaResult broadcast(void* data, size_t bytes, int root) = 0;
  virtual tcaResult barrier() = 0;
  // Whether MPI_COMM_WORLD is this job: the mpi transport runs only then.
  virtual bool is_mpi() const { return false; }
  // Once a rank's death can be seen (`liveness`), calls that involve other ranks may be run
  // where they can be let go (the MPI guard, bootstrap/call_guard.h); stop_guard ends that.
  virtual tcaResult start_guard(CallGuard::Liveness) { return TCA_SUCCESS; }
  virtual void stop_guard() {}

 private:
  std::string reason_;
};

// The bootstrap TCA_BOOTSTRAP asks for (auto: see bootstrap/choose.cc); collective.
tcaResult make_bootstrap(int timeout_ms, std::unique_ptr<Bootstrap>* out);

tcaResult make_single_bootstrap(std::unique_ptr<Bootstrap>* out);
#ifdef TCA_HAVE_MPI
// Initializes MPI if the program has not, and finalizes it on destruction in that case (not
// when a rank was found dead: MPI's finalize would wait for it).
tcaResult make_mpi_bootstrap(std::unique_ptr<Bootstrap>* out);
// Whether this process initialized MPI (and has not finalized it).
bool mpi_in_use();
// The guard of this process's MPI calls that involve other ranks (bootstrap/call_guard.h): the
// bootstrap's exchanges and the mpi transport's one-sided calls go through it. Never destroyed.
CallGuard& mpi_guard();
#endif
#ifdef TCA_HAVE_PMIX
tcaResult make_pmix_bootstrap(int timeout_ms, std::unique_ptr<Bootstrap>* out);
#endif

}  // namespace tca
