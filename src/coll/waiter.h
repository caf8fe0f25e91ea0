// How a collective waits for a notification. tcaWaitDMARecvDesc drives every transport's
// progress between two looks at the notification and yields the core only after many spins.
// A peer on the shared-memory transport needs no progress, so for those the waiter polls with
// tcaTestDMARecvDesc alone and, when this host's ranks outnumber its cores, yields after every
// miss (as MPI does when oversubscribed) so that the rank being waited for gets to run. The
// blocking call stays the fallback after a while: it enforces tca's timeout and notices a
// dead peer.
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
  bool yield_after_miss_ = false;
};

}  // namespace tca::coll
