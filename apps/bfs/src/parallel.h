// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Threads inside a rank: a pool of workers that share loops over index ranges.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace bfs {

class ThreadPool {
 public:
  // `threads` >= 1 workers in all, the calling thread included.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls body(first, last, thread) over [0, count) in pieces of about `grain` items, handed out
  // dynamically; `thread` < size() names the worker (for per-thread partial results). Returns
  // when every piece is done. An exception of a piece is rethrown here.
  using Body = std::function<void(uint64_t first, uint64_t last, int thread)>;
  void parallel_for(uint64_t count, uint64_t grain, const Body& body);

 private:
  void work(int thread);
  void run_pieces(int thread);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  int busy_ = 0;
  // The running loop.
  const Body* body_ = nullptr;
  uint64_t count_ = 0, grain_ = 1;
  uint64_t next_ = 0;  // guarded by mutex_ for hand-out: pieces are large, contention is low
  std::exception_ptr failure_;
};

// Threads per rank when the user gives none: the host's cores shared by the ranks on it.
int default_threads(int ranks_on_host);

}  // namespace bfs
