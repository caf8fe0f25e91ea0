// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// What the environment says about how this process was started: by an MPI launcher, under a
// PMIx server, or with the tcp bootstrap's variables (tca's own TCA_RANK, TCA_SIZE, TCA_ROOT, or
// torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
#pragma once

#include <string>

#include "bootstrap/socket.h"
#include "tca/tca.h"

namespace tca {

struct TcpEnvironment {
  int rank = 0;
  int size = 1;
  Endpoint root;
  // The secret every connection proves it knows: TCA_JOB_KEY, else one derived from what the
  // launcher gave this job only (its run or job id) and the root's address.
  std::string key;
  std::string key_source;
  std::string local_host;  // the address of TCA_SOCKET_IFNAME ("": the route to the root)
  std::string source;      // which variables said so, for messages
};

// The launcher whose variables are set ("" where none): Open MPI's mpirun, MPICH's Hydra,
// MVAPICH, Intel MPI.
std::string mpi_launcher();
// Whether a PMIx server started this process (PMIX_NAMESPACE and PMIX_RANK are set).
bool pmix_server_present();
// Whether tca's or torchrun's tcp variables are set, at least in part.
bool tcp_environment_present();
// Reads and checks them: clear errors for a part missing, a rank out of range, a bad port.
tcaResult read_tcp_environment(TcpEnvironment* out);

}  // namespace tca
