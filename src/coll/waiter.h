// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// How a collective waits for a notification. tcaWaitDMARecvDesc drives every transport's
// progress between two looks at the notification and yields the core only after many spins.
// A peer on the shared-memory transport needs no progress, so for those the waiter polls with
// tcaTestDMARecvDesc alone, and the blocking call is the fallback after a while: it enforces
// tca's timeout and notices a dead peer. When this host's ranks outnumber its cores the
// waiter blocks at once: the blocking wait then yields the core almost at once, so that the rank
// being waited for gets it, and sleeps until the sender wakes it once the wait grows long.
#pragma once

#include <vector>

#include "tca/tca.h"

namespace tca::coll {

class NotificationWaiter {
 public:
  // Asks the transports which peers are reached through shared memory (local calls only).
  static tcaResult create(int rank, int ranks, NotificationWaiter* out);
  tcaResult wait(int peer, int slot) const;

 private:
  std::vector<bool> polled_;  // by peer: shared memory, polling needs no transport progress
  bool oversubscribed_ = false;
};

}  // namespace tca::coll
