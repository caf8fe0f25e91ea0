// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "core/reserved.h"

#include "base/error.h"

namespace tca {
namespace {
thread_local int t_reserved_depth = 0;
}  // namespace

ReservedScope::ReservedScope() { ++t_reserved_depth; }
ReservedScope::~ReservedScope() { --t_reserved_depth; }
bool ReservedScope::active() { return t_reserved_depth > 0; }

namespace {

// `index` must lie in [0, total), and below `user` unless tca itself calls (ReservedScope);
// fails with `error`, naming the index `what` and the application's range `whats`.
tcaResult check_index(int index, int total, int user, tcaResult error, const char* what,
                      const char* whats) {
  if (index < 0 || index >= total) TCA_FAIL(error, "{} {} outside [0, {})", what, index, total);
  if (index >= user && !ReservedScope::active())
    TCA_FAIL(error, "{} {} is reserved for tca's collectives; applications use {} [0, {})", what,
             index, whats, user);
  return TCA_SUCCESS;
}

}  // namespace

tcaResult check_slot(int slot) {
  return check_index(slot, TCA_NOTIFY_SLOTS, TCA_USER_NOTIFY_SLOTS, TCA_ERROR_INVALID_SLOT,
                     "notification slot", "slots");
}

tcaResult check_channel(int channel) {
  return check_index(channel, TCA_DMA_CHANNELS, TCA_USER_DMA_CHANNELS, TCA_ERROR_INVALID_CHANNEL,
                     "DMA channel", "channels");
}

}  // namespace tca
