// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll/waiter.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <utility>

#include "coll/status.h"

namespace tca::coll {
namespace {

// How long polling goes on before the blocking wait takes over (so tca's timeout and its
// dead-peer checks apply, late by at most this).
constexpr auto kPollingTime = std::chrono::milliseconds(10);
// Misses spun before yielding on a host with a core per rank: a notification usually lands
// within microseconds.
constexpr int kSpinsBeforeYield = 1000;

// The host's cores, not this process's affinity: launchers bind each rank to one core.
int cores_online() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? static_cast<int>(cores) : 1;
}

}  // namespace

tcaResult NotificationWaiter::create(int rank, int ranks, NotificationWaiter* out) {
  NotificationWaiter waiter;
  waiter.polled_.assign(ranks, false);
  int ranks_here = 1;
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == rank) continue;
    const char* transport = nullptr;
    TCA_CHECK(tcaPeerTransport(peer, &transport));
    waiter.polled_[peer] = std::strcmp(transport, "shm") == 0;
    ranks_here += waiter.polled_[peer] ? 1 : 0;
  }
  waiter.oversubscribed_ = ranks_here > cores_online();
  *out = std::move(waiter);
  return TCA_SUCCESS;
}

tcaResult NotificationWaiter::wait(int peer, int slot) const {
  // Oversubscribed, the blocking wait sleeps until the sender wakes it, handing the core over.
  if (polled_[peer] && !oversubscribed_) {
    const auto give_up = std::chrono::steady_clock::now() + kPollingTime;
    for (int miss = 0;; ++miss) {
      int arrived = 0;
      TCA_CHECK(tcaTestDMARecvDesc(peer, slot, &arrived, nullptr));
      if (arrived) return TCA_SUCCESS;
      if (miss >= kSpinsBeforeYield) sched_yield();
      if (miss % 256 == 255 && std::chrono::steady_clock::now() > give_up) break;
    }
  }
  return tcaWaitDMARecvDesc(peer, slot, nullptr);
}

}  // namespace tca::coll
