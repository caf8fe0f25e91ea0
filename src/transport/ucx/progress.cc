// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/ucx/progress.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace tca::ucx {

namespace {

// The owner used the worker this recently: the helper leaves it alone.
constexpr uint64_t kOwnerActiveNs = 500'000;
// The helper's pause between rounds: short after a round that found work, growing while idle.
constexpr auto kShortestPause = std::chrono::microseconds(20);
constexpr auto kLongestPause = std::chrono::microseconds(1000);
// Rounds of progress one turn may take before it lets the owner in again.
constexpr int kRoundsPerTurn = 1024;

}  // namespace

uint64_t ProgressThread::now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void ProgressThread::start(const Worker& worker, std::function<void()> idle_work) {
  stop();
  idle_work_ = std::move(idle_work);
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = false;
  }
  touch();
  thread_ = std::thread([this, &worker] { run(&worker); });
}

void ProgressThread::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_wake_.notify_all();
  thread_.join();
}

void ProgressThread::run(const Worker* worker) {
  auto pause = kShortestPause;
  std::unique_lock<std::mutex> stop_lock(stop_mutex_);
  while (!stopping_) {
    stop_lock.unlock();
    bool busy = false;
    const bool owner_active =
        now_ns() - last_use_ns_.load(std::memory_order_relaxed) < kOwnerActiveNs;
    if (!owner_active) {
      std::unique_lock<std::recursive_mutex> lock(mutex_, std::try_to_lock);
      for (int round = 0; lock.owns_lock() && round < kRoundsPerTurn; ++round) {
        if (worker->progress() == 0) break;
        busy = true;
      }
      if (lock.owns_lock() && idle_work_) idle_work_();
    }
    if (busy) busy_rounds_.fetch_add(1, std::memory_order_relaxed);
    pause = owner_active ? kLongestPause
            : busy       ? kShortestPause
                         : std::min(2 * pause, kLongestPause);
    stop_lock.lock();
    stop_wake_.wait_for(stop_lock, pause, [this] { return stopping_; });
  }
}

}  // namespace tca::ucx
