// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Keeps a call that involves other ranks from holding this rank forever when one of them dies.
//
// MPI without ULFM has no fault tolerance: under `mpirun --enable-recovery` the survivors of a
// killed rank run on, but a call already under way to it may never return (Open MPI 4.1's
// shared-memory component retries a one-sided access to a dead process forever, and a collective
// waits for it). Checking the peer before each call does not close that window, since the peer
// can die during the call. A guard that is started runs each call on a thread of its own; the
// caller waits for it and checks the ranks the call involves; when one of them has died, the
// caller gives up on the call, which stays on its thread, and gets TCA_ERROR_PEER_FAILED. After
// that the library it was calling must not be entered again from any thread: every later call
// fails at once (abandoned() says so to those who finalize). A guard that is not started runs the
// call on the caller's thread, at no cost.
//
// One caller at a time (as MPI_THREAD_SERIALIZED asks). A guard on which a call was abandoned
// must outlive that call's thread: the process-wide one is never destroyed.
//
// Only deaths the caller can see end a wait (a rank on the same machine); a call involving only
// ranks on other machines is waited for as long as it takes, as without the guard.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tca/tca.h"

namespace tca {

class CallGuard {
 public:
  // Fails with TCA_ERROR_PEER_FAILED when `rank` has died (only where that can be seen).
  using Liveness = std::function<tcaResult(int rank)>;
  using Call = std::function<tcaResult()>;

  CallGuard() = default;
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;
  ~CallGuard();

  // Starts the thread the calls run on. `ranks` are every rank a call may involve ("all").
  tcaResult start(Liveness liveness, std::vector<int> all_ranks);
  // Ends the thread (when no call was abandoned on it) and drops the liveness check.
  void stop();
  bool started() const { return started_; }
  // Whether calls must go through run(): it is started, or a call was abandoned (and run()
  // refuses every call). Read on the callers' thread only.
  bool engaged() const { return started_ || abandoned_; }
  // A call was given up on: its thread is still inside it, and the library must not be entered.
  bool abandoned() const;
  // A rank involved in a guarded call was found dead (before the call or during it).
  bool peer_failed() const;

  // Runs `call`, which involves `ranks` (every rank where null). Started: a rank found dead
  // before the call fails it with TCA_ERROR_PEER_FAILED and nothing runs; one found dead during
  // it abandons it. The call's own failure comes back with its message.
  tcaResult run(const std::vector<int>* ranks, const char* what, const Call& call);

 private:
  struct Job {
    Call call;
    tcaResult result = TCA_SUCCESS;
    std::string message;
    std::atomic<bool> done{false};  // result and message are set (stored under the mutex)
    bool abandoned = false;
  };

  void serve();
  // The next posted job, or null when stopping; spins briefly before it sleeps.
  std::shared_ptr<Job> next_job();
  // The first rank of `ranks` found dead (its error recorded), or TCA_SUCCESS.
  tcaResult check(const std::vector<int>& ranks);
  tcaResult wait_for(const std::shared_ptr<Job>& job, const std::vector<int>& ranks,
                     const char* what);
  // The answer of a job that is done, its message made this thread's.
  static tcaResult finish(const Job& job);

  Liveness liveness_;
  std::vector<int> all_ranks_;
  bool started_ = false;
  mutable std::mutex mutex_;
  std::condition_variable job_posted_;
  std::condition_variable job_done_;
  std::shared_ptr<Job> pending_;     // posted, not yet taken by the thread
  std::atomic<bool> posted_{false};  // pending_ is set: what the thread spins on
  bool thread_sleeping_ = false;     // the thread waits on job_posted_: notify it
  bool caller_sleeping_ = false;     // the caller waits on job_done_: notify it
  bool stopping_ = false;
  bool abandoned_ = false;
  bool peer_failed_ = false;
  std::string abandoned_what_;
  std::thread thread_;
};

}  // namespace tca
