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

tcaResult check_slot(int slot) {
  if (slot < 0 || slot >= TCA_NOTIFY_SLOTS)
    TCA_FAIL(TCA_ERROR_INVALID_SLOT, "notification slot {} outside [0, {})", slot,
             TCA_NOTIFY_SLOTS);
  if (slot >= TCA_USER_NOTIFY_SLOTS && !ReservedScope::active())
    TCA_FAIL(TCA_ERROR_INVALID_SLOT,
             "notification slot {} is reserved for tca's collectives; "
             "applications use slots [0, {})",
             slot, TCA_USER_NOTIFY_SLOTS);
  return TCA_SUCCESS;
}

tcaResult check_channel(int channel) {
  if (channel < 0 || channel >= TCA_DMA_CHANNELS)
    TCA_FAIL(TCA_ERROR_INVALID_CHANNEL, "DMA channel {} outside [0, {})", channel,
             TCA_DMA_CHANNELS);
  if (channel >= TCA_USER_DMA_CHANNELS && !ReservedScope::active())
    TCA_FAIL(TCA_ERROR_INVALID_CHANNEL,
             "DMA channel {} is reserved for tca's collectives; "
             "applications use channels [0, {})",
             channel, TCA_USER_DMA_CHANNELS);
  return TCA_SUCCESS;
}

}  // namespace tca
