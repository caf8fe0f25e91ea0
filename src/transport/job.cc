// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/job.h"

#include <signal.h>

#include <cerrno>

#include "base/error.h"

namespace tca {

tcaResult Job::check_peer_alive(int peer) const {
  if (peer == rank_ || !same_machine(peer)) return TCA_SUCCESS;
  if (kill(peers_[peer].pid, 0) != 0 && errno == ESRCH)
    TCA_FAIL(TCA_ERROR_PEER_FAILED, "rank {} (pid {}) has exited", peer, peers_[peer].pid);
  return TCA_SUCCESS;
}

}  // namespace tca
