// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "base/wake.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <ctime>

#include "base/region.h"

namespace tca {
namespace {

std::atomic<uint32_t>* as_atomic(uint32_t* word) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex words are 32-bit");
  return reinterpret_cast<std::atomic<uint32_t>*>(word);
}

// Shared (not process-private) futexes: the word lives in a memfd that other processes map.
long futex(uint32_t* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

}  // namespace

WakeWord::WakeWord(unsigned char* control_block, int world)
    : word_(reinterpret_cast<uint32_t*>(control_block + wake_word_offset(world))),
      sleepers_(reinterpret_cast<uint32_t*>(control_block + sleepers_offset(world))) {}

uint32_t WakeWord::prepare() {
  as_atomic(sleepers_)->fetch_add(1, std::memory_order_seq_cst);
  return as_atomic(word_)->load(std::memory_order_seq_cst);
}

void WakeWord::sleep(uint32_t seen, uint32_t timeout_us) {
  const timespec timeout{static_cast<time_t>(timeout_us / 1000000),
                         static_cast<long>(timeout_us % 1000000) * 1000};
  futex(word_, FUTEX_WAIT, seen, &timeout);  // EAGAIN, a wake, a timeout or a signal: re-check
}

void WakeWord::finish() { as_atomic(sleepers_)->fetch_sub(1, std::memory_order_seq_cst); }

void wake_sleepers(unsigned char* control_block, int world) {
  // Pairs with prepare(): either the sleeper's re-check sees the notification stored before
  // this fence, or this load sees the sleeper counted.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  auto* sleepers = reinterpret_cast<uint32_t*>(control_block + sleepers_offset(world));
  if (as_atomic(sleepers)->load(std::memory_order_relaxed) == 0) return;
  auto* word = reinterpret_cast<uint32_t*>(control_block + wake_word_offset(world));
  as_atomic(word)->fetch_add(1, std::memory_order_seq_cst);
  futex(word, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace tca
