// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll/device_engine_tuning.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "base/settings.h"
#include "tuning/collective_choice.h"

namespace tca::coll {

tcaResult choose_device_tuning(tcaCollKind kind, size_t result_bytes, size_t count,
                               DeviceTuning* out) {
  std::string protocol;
  TCA_CHECK(setting_choice("TCA_COLL_PROTOCOL", &protocol));
  if (protocol == "ll" || protocol == "inline") {
    out->inline_protocol = true;
  } else if (protocol == "simple") {
    out->inline_protocol = false;
  } else {
    out->inline_protocol = tuning::gpu_inline_protocol(kind, result_bytes);
  }
  size_t wanted = tuning::gpu_channels(result_bytes, out->inline_protocol);
  int64_t parsed = 0;
  bool set = false;
  TCA_CHECK(setting_count("TCA_COLL_CHANNELS", &parsed, &set));
  if (set) wanted = static_cast<size_t>(parsed);
  out->channels = static_cast<int>(std::min(wanted, count));
  out->threads = tuning::gpu_threads(out->inline_protocol, result_bytes / out->channels);
  return TCA_SUCCESS;
}

}  // namespace tca::coll
