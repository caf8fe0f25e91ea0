// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Progress for a worker while its owner is elsewhere. Over transports that move one-sided data
// in software (TCP: a put or get lands only inside the target's progress), a rank busy in its own
// computation or blocked in MPI would stall every peer that reads or writes its memory. A helper
// thread progresses the worker whenever the owner's thread has not used it for a while, so a
// rank's memory stays reachable between its tca calls; while the owner uses the worker itself
// (a kick, a wait that progresses), the helper stays away and only wakes now and then.
//
// Every use of the worker by the owner's thread holds a WorkerUse (the lock and the note of
// recent use); the helper takes the same lock around its rounds of progress.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "transport/ucx/worker.h"

namespace tca::ucx {

class ProgressThread {
 public:
  ProgressThread() = default;
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;
  ~ProgressThread() { stop(); }

  // Starts the helper for `worker` (which must outlive stop()); after each of its rounds of
  // progress it runs `idle_work` (holding the lock).
  void start(const Worker& worker, std::function<void()> idle_work);
  // Ends the helper (waits for its current round); the owner's thread then has the worker alone.
  void stop();

  std::recursive_mutex& mutex() { return mutex_; }
  // Marks the owner's thread as using the worker now.
  void touch() { last_use_ns_.store(now_ns(), std::memory_order_relaxed); }
  // Rounds of progress the helper found work in (for tests and logs).
  uint64_t busy_rounds() const { return busy_rounds_.load(std::memory_order_relaxed); }

 private:
  static uint64_t now_ns();
  void run(const Worker* worker);

  std::function<void()> idle_work_;

  std::recursive_mutex mutex_;
  std::atomic<uint64_t> last_use_ns_{0};
  std::atomic<uint64_t> busy_rounds_{0};
  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  bool stopping_ = false;  // under stop_mutex_
  std::thread thread_;
};

// The owner's thread's use of the worker: holds the lock, notes the use when taken and released.
class WorkerUse {
 public:
  explicit WorkerUse(ProgressThread& progress) : progress_(progress), lock_(progress.mutex()) {
    progress_.touch();
  }
  ~WorkerUse() { progress_.touch(); }
  WorkerUse(const WorkerUse&) = delete;
  WorkerUse& operator=(const WorkerUse&) = delete;

 private:
  ProgressThread& progress_;
  std::unique_lock<std::recursive_mutex> lock_;
};

}  // namespace tca::ucx
