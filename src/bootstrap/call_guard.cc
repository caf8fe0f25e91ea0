// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "bootstrap/call_guard.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/error.h"

namespace tca {
namespace {
// How often a waiting caller looks at the ranks of the call: from 20 µs, doubling to 2 ms, so
// that short calls cost no check and a death is seen within a few milliseconds.
constexpr std::chrono::microseconds kFirstLook{20};
constexpr std::chrono::microseconds kLongestLook{2000};
// Before sleeping, the caller looks for the answer, and the thread for the next call, this long,
// yielding the core between looks: a hand-over through a sleep costs tens of microseconds, and
// calls come in quick succession (a transfer, then the wait for it).
constexpr std::chrono::microseconds kSpin{50};

using Clock = std::chrono::steady_clock;

// Whether `flag` became true within kSpin, looking between yields.
bool spin_for(const std::atomic<bool>& flag) {
  const auto until = Clock::now() + kSpin;
  for (unsigned looks = 1;; ++looks) {
    if (flag.load(std::memory_order_acquire)) return true;
    if (looks % 8 == 0 && Clock::now() > until) return false;
    sched_yield();
  }
}
}  // namespace

CallGuard::~CallGuard() { stop(); }

tcaResult CallGuard::start(Liveness liveness, std::vector<int> all_ranks) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (abandoned_)
    TCA_FAIL(TCA_ERROR_PEER_FAILED,
             "a call ({}) was given up on when a rank died during it; "
             "its thread is still inside it, so the library it called cannot be used again in "
             "this process",
             abandoned_what_);
  if (started_) TCA_FAIL(TCA_ERROR_ALREADY_INITIALIZED, "the call guard is already started");
  liveness_ = std::move(liveness);
  all_ranks_ = std::move(all_ranks);
  stopping_ = false;
  peer_failed_ = false;
  try {
    thread_ = std::thread([this] { serve(); });
  } catch (const std::system_error& error) {
    TCA_FAIL(TCA_ERROR_OUT_OF_RESOURCES, "no thread for the call guard: {}", error.what());
  }
  started_ = true;
  return TCA_SUCCESS;
}

void CallGuard::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!started_) return;
    started_ = false;
    stopping_ = true;
  }
  job_posted_.notify_all();
  if (thread_.joinable()) thread_.join();  // detached, and so not joinable, once abandoned
  liveness_ = nullptr;
}

bool CallGuard::abandoned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return abandoned_;
}

bool CallGuard::peer_failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peer_failed_;
}

std::shared_ptr<CallGuard::Job> CallGuard::next_job() {
  spin_for(posted_);
  std::unique_lock<std::mutex> lock(mutex_);
  thread_sleeping_ = true;
  job_posted_.wait(lock, [&] { return stopping_ || pending_ != nullptr; });
  thread_sleeping_ = false;
  posted_.store(false, std::memory_order_relaxed);
  return std::move(pending_);  // null when stopping
}

void CallGuard::serve() {
  for (;;) {
    const std::shared_ptr<Job> job = next_job();
    if (job == nullptr) return;
    clear_last_error();
    const tcaResult result = job->call();
    std::string message = last_error_message();
    std::lock_guard<std::mutex> lock(mutex_);
    // A caller that gave up has gone on without this thread: touch nothing more.
    if (job->abandoned) return;
    job->result = result;
    job->message = std::move(message);
    job->done.store(true, std::memory_order_release);
    if (caller_sleeping_) job_done_.notify_all();
  }
}

tcaResult CallGuard::check(const std::vector<int>& ranks) {
  for (int rank : ranks) {
    const tcaResult alive = liveness_(rank);
    if (alive != TCA_SUCCESS) {
      std::lock_guard<std::mutex> lock(mutex_);
      peer_failed_ = true;
      return alive;
    }
  }
  return TCA_SUCCESS;
}

tcaResult CallGuard::run(const std::vector<int>* ranks, const char* what, const Call& call) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (abandoned_)
      TCA_FAIL(TCA_ERROR_PEER_FAILED,
               "{} is refused: an earlier call ({}) was given up on when "
               "a rank died during it, and its thread is still inside the library",
               what, abandoned_what_);
  }
  if (!started_) return call();
  const std::vector<int>& involved = ranks != nullptr ? *ranks : all_ranks_;
  TCA_CHECK(check(involved));  // a rank already dead: nothing starts
  auto job = std::make_shared<Job>();
  job->call = call;  // the thread keeps its own copy, in case it outlives the caller's
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ = job;
    posted_.store(true, std::memory_order_release);
    wake = thread_sleeping_;
  }
  if (wake) job_posted_.notify_one();
  if (spin_for(job->done)) return finish(*job);
  return wait_for(job, involved, what);
}

tcaResult CallGuard::wait_for(const std::shared_ptr<Job>& job, const std::vector<int>& ranks,
                              const char* what) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto look = kFirstLook;
  while (!job->done) {
    caller_sleeping_ = true;
    job_done_.wait_for(lock, look, [&] { return job->done.load(); });
    caller_sleeping_ = false;
    if (job->done) break;
    look = std::min(look * 2, kLongestLook);
    lock.unlock();
    const tcaResult alive = check(ranks);
    lock.lock();
    if (alive != TCA_SUCCESS && pending_ == job) {  // never taken: withdrawn, nothing ran
      pending_.reset();
      posted_.store(false, std::memory_order_relaxed);
      return append_frame(alive, __FILE__, __LINE__);
    }
    if (alive != TCA_SUCCESS && !job->done) {
      job->abandoned = true;
      abandoned_ = true;
      abandoned_what_ = what;
      thread_.detach();  // it stays inside the call; a new one would enter the library again
      started_ = false;
      const std::string death = last_error_message();
      TCA_FAIL(TCA_ERROR_PEER_FAILED,
               "{} was given up on, a rank it involves having died "
               "during it ({}); the call is left on a thread of its own, and the library it was "
               "in cannot be entered again in this process",
               what, death);
    }
  }
  lock.unlock();
  return finish(*job);
}

tcaResult CallGuard::finish(const Job& job) {
  if (job.result == TCA_SUCCESS) return TCA_SUCCESS;
  adopt_error(job.result, job.message);
  return append_frame(job.result, __FILE__, __LINE__);
}

}  // namespace tca
