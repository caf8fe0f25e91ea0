// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Notification slots and the DMA channel that tca's own layers use (the collectives, the CUDA
// engine calibration). Applications name only [0, TCA_USER_NOTIFY_SLOTS) and
// [0, TCA_USER_DMA_CHANNELS); a call made inside a ReservedScope may name the rest.
#pragma once

#include "tca/tca.h"

namespace tca {

// Marks the calls made while it lives as tca's own (RAII; nests).
class ReservedScope {
 public:
  ReservedScope();
  ~ReservedScope();
  ReservedScope(const ReservedScope&) = delete;
  ReservedScope& operator=(const ReservedScope&) = delete;
  static bool active();
};

// TCA_ERROR_INVALID_SLOT for a slot outside [0, TCA_NOTIFY_SLOTS), or a reserved one named by an
// application.
tcaResult check_slot(int slot);
// TCA_ERROR_INVALID_CHANNEL likewise for DMA channels.
tcaResult check_channel(int channel);

}  // namespace tca
