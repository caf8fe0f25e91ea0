// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The Context's notifications: counters per peer and slot, notify, test and the waits (spin,
// yield, then sleep on the wake word), fence.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/error.h"
#include "base/log.h"
#include "base/wake.h"
#include "core/cells.h"
#include "core/context.h"
#include "core/observe/observe.h"

namespace tca {
namespace {

// Tells the core this is a spin: it yields issue slots to an SMT sibling (which may be the very
// rank whose copy we wait for) and saves power.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// A wait spins this many misses before it yields the core; with more ranks than cores, fewer.
constexpr uint64_t kSpins = 1024;
constexpr uint64_t kSpinsOversubscribed = 4;
// With more ranks than cores a wait yields for this long before it sleeps on the futex: a yield
// hands the core to a runnable rank at once, while a sleep and its wake-up cost tens of
// microseconds (on 4 ranks over 2 cores, sleeping at once made an 8-byte allreduce 6x slower).
constexpr auto kYieldingTime = std::chrono::milliseconds(1);
// A poll that finds nothing advances every transport at this many misses, else only the one
// that controls the awaited peer.
constexpr uint32_t kPollMissesPerFullProgress = 16;
// Sleeps of an oversubscribed wait: the first short (a notification without a wake still
// lands soon), then longer.
constexpr uint32_t kFirstSleepUs = 50;
constexpr uint32_t kMaxSleepUs = 2000;

}  // namespace

// ---------------------------------------------------------------- notifications

tcaResult Context::notify(int dst_rank, int slot) {
  TCA_CHECK(controller_[dst_rank]->fence());
  return controller_[dst_rank]->notify(dst_rank, slot, next_notify_value(dst_rank, slot));
}

bool Context::consume_arrival(int src_rank, int slot, int* from) {
  const auto consume_from = [&](int src) {
    const uint64_t value =
        cell_at(control_block(), notify_cell_offset(src, slot))->load(std::memory_order_acquire);
    uint64_t& consumed = *notify_consumed_counter(src, slot);
    if (value <= consumed) return false;
    ++consumed;
    if (from != nullptr) *from = src;
    return true;
  };
  if (src_rank != TCA_ANY_RANK) return consume_from(src_rank);
  // Start the scan after the last rank served so that no sender starves the others.
  for (int i = 1; i <= size_; ++i) {
    const int src = (any_source_cursor_ + i) % size_;
    if (consume_from(src)) {
      any_source_cursor_ = src;
      return true;
    }
  }
  return false;
}

tcaResult Context::progress_transports() {
  for (auto& transport : transports_) TCA_CHECK(transport->progress());
  return TCA_SUCCESS;
}

tcaResult Context::test_notification(int src_rank, int slot, int* arrived, int* from) {
  *arrived = consume_arrival(src_rank, slot, from) ? 1 : 0;
  if (*arrived) return TCA_SUCCESS;
  // Like MPI_Test, a poll that found nothing advances the transports: a sender's one-sided
  // operation may need this rank to enter MPI before its notification can land. The transport
  // that controls the awaited peer every time (none for a same-host peer on shm), every
  // transport at every 16th miss: entering MPI or UCX costs (with more ranks than cores
  // Open MPI gives the core away inside it), and other peers' operations only need it now and
  // then to go on.
  Transport* controller =
      src_rank != TCA_ANY_RANK && !controller_.empty() ? controller_[src_rank] : nullptr;
  if (controller != nullptr && ++poll_misses_ % kPollMissesPerFullProgress != 0)
    return controller->progress();
  return progress_transports();
}

tcaResult Context::wait_notification(int src_rank, int slot, int* from) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  WakeWord wake(control_block(), size_);
  uint32_t sleep_us = kFirstSleepUs;
  Clock::time_point sleep_from{};  // oversubscribed: yields until then, then sleeps
  bool sleeping = false;
  for (uint64_t spin = 0;; ++spin) {
    if (consume_arrival(src_rank, slot, from)) return TCA_SUCCESS;
    cpu_relax();
    // Progress costs calls into MPI or UCX (a UCX worker with TCP connections polls its sockets);
    // a same-host notification needs none, so it is paid rarely: the transport that controls
    // the awaited peer now and then, every transport a quarter as often.
    // With more ranks than cores every pass from kSpinsOversubscribed on yields the core: then
    // each pass enters the transport, so that a peer's operation that needs this rank inside MPI
    // is served at each turn this rank gets, not at one turn in 64.
    if (spin % 64 == 63 || (oversubscribed_ && spin >= kSpinsOversubscribed)) {
      // (While the transports are still being made, as in the CUDA calibration, none controls.)
      Transport* controller =
          src_rank != TCA_ANY_RANK && !controller_.empty() ? controller_[src_rank] : nullptr;
      if (controller != nullptr && spin % 256 != 255) {
        TCA_CHECK(controller->progress());
      } else {
        TCA_CHECK(progress_transports());
      }
    }
    // A notification usually lands within microseconds: spin, then yield the core. When ranks
    // outnumber cores the sender may be waiting for this very core: yield almost at once, and
    // after a while of that sleep until the sender wakes us (where it needs no progress from
    // this rank, as on shm), so that a long wait costs no core. Notifications that come without
    // a wake (GPUs) are seen when the sleep times out; the sleeps grow.
    if (spin < (oversubscribed_ ? kSpinsOversubscribed : kSpins)) continue;
    if (oversubscribed_ && !sleeping) {
      if (spin == kSpinsOversubscribed) {
        sleep_from = Clock::now() + kYieldingTime;
      } else if (spin % 16 == 0) {
        sleeping = Clock::now() >= sleep_from && sleeps_waiting_for(src_rank);
      }
    }
    if (sleeping) {
      const uint32_t seen = wake.prepare();
      const bool arrived = consume_arrival(src_rank, slot, from);
      if (!arrived) wake.sleep(seen, sleep_us);
      wake.finish();
      if (arrived) return TCA_SUCCESS;
      sleep_us = std::min(2 * sleep_us, kMaxSleepUs);
      TCA_CHECK(progress_transports());
    } else {
      sched_yield();
      if (spin % 256 != 0) continue;
    }
    if (observe::on()) observe::dump_if_requested(*this);
    if (src_rank != TCA_ANY_RANK) {
      TCA_CHECK(check_peer_alive(src_rank));
    } else {
      for (int peer = 0; peer < size_; ++peer) TCA_CHECK(check_peer_alive(peer));
    }
    if (Clock::now() > deadline) return timed_out(src_rank, slot);
  }
}

tcaResult Context::timed_out(int src_rank, int slot) {
  observe::timed_out(*this, "timeout");
  std::string counts;  // what arrived and was consumed on the slot, per awaited peer
  for (int src = 0; src < size_; ++src) {
    if (src_rank != TCA_ANY_RANK && src != src_rank) continue;
    const uint64_t arrived =
        cell_at(control_block(), notify_cell_offset(src, slot))->load(std::memory_order_acquire);
    if (src_rank == TCA_ANY_RANK && arrived == 0) continue;
    counts += fmt::format("{}rank {}: {} arrived, {} consumed", counts.empty() ? "" : "; ", src,
                          arrived, *notify_consumed_counter(src, slot));
  }
  TCA_FAIL(TCA_ERROR_TIMEOUT,
           "rank {} waited {} ms for a notification on slot {} from {} ({}); outstanding here: {}",
           rank_, timeout_ms_, slot,
           src_rank == TCA_ANY_RANK ? std::string("any rank") : fmt::format("rank {}", src_rank),
           counts.empty() ? std::string("none arrived from any rank") : counts,
           observe::outstanding(*this));
}

bool Context::sleeps_waiting_for(int src_rank) const {
  if (!oversubscribed_) return false;
  // An MPI peer's one-sided operations may need this rank inside MPI to complete.
  const auto on_shm = [&](int peer) {
    return !controller_.empty() && controller_[peer]->path() == TCA_PATH_SHM;
  };
  if (src_rank != TCA_ANY_RANK) return on_shm(src_rank);
  for (int peer = 0; peer < size_; ++peer)
    if (!on_shm(peer)) return false;
  return true;
}

tcaResult Context::fence() {
  for (auto& transport : transports_) TCA_CHECK(transport->fence());
  return TCA_SUCCESS;
}

}  // namespace tca
