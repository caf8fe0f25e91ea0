// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Sleeping waits for ranks that outnumber their host's cores: a waiter that has found nothing
// for a while (it yields the core first, which is quicker while the wait is short) sleeps on the
// wake word of its own control block (a shared futex, base/region.h), and a same-host sender that
// raised one of its notifications wakes it. Senders pay one load when nobody sleeps.
#pragma once

#include <cstdint>

namespace tca {

// The receiver's side, around one sleep: announce, re-check, sleep, withdraw.
class WakeWord {
 public:
  // `control_block` is this rank's own, of `world` ranks.
  WakeWord(unsigned char* control_block, int world);
  // Counts this rank as sleeping and returns the word's value to sleep on; the caller re-checks
  // its condition after this and before sleep().
  uint32_t prepare();
  // Sleeps until the word changes from `seen`, a sender wakes it, or `timeout_us` pass.
  void sleep(uint32_t seen, uint32_t timeout_us);
  void finish();  // no longer sleeping

 private:
  uint32_t* word_;
  uint32_t* sleepers_;
};

// The sender's side: after storing a notification into `control_block` (the receiver's, of
// `world` ranks), wakes its sleepers, if any.
void wake_sleepers(unsigned char* control_block, int world);

}  // namespace tca
