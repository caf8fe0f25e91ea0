// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "parallel.h"

#include <algorithm>
#include <exception>

namespace bfs {

ThreadPool::ThreadPool(int threads) {
  for (int t = 1; t < std::max(1, threads); ++t) workers_.emplace_back([this, t] { work(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_pieces(int thread) {
  for (;;) {
    uint64_t first;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ >= count_ || failure_) return;
      first = next_;
      next_ = std::min(count_, next_ + grain_);
    }
    try {
      (*body_)(first, std::min(count_, first + grain_), thread);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
    }
  }
}

void ThreadPool::work(int thread) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_pieces(thread);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(uint64_t count, uint64_t grain, const Body& body) {
  if (count == 0) return;
  grain = std::max<uint64_t>(1, grain);
  if (workers_.empty() || count <= grain) {
    body(0, count, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    count_ = count;
    grain_ = grain;
    next_ = 0;
    failure_ = nullptr;
    busy_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  run_pieces(0);
  std::exception_ptr failure;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return busy_ == 0; });
    failure = failure_;
    body_ = nullptr;
  }
  if (failure) std::rethrow_exception(failure);
}

int default_threads(int ranks_on_host) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, static_cast<int>(cores) / std::max(1, ranks_on_host));
}

}  // namespace bfs
