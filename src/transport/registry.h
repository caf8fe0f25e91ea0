// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The transports of this build, in order of preference. Adding a transport is a folder under
// src/transport/ and one line in registry.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "transport/transport.h"

namespace tca {

class Job;

// Collective over all ranks (every rank calls it in tcaInit, in registry order). Appends the
// transport's paths to `out` (most have one; the CUDA transport has one per engine), all with
// the given id. A transport that cannot work here (no GPU, no network) still succeeds: its
// can_reach answers no.
using TransportFactory = tcaResult (*)(Job& job, int id,
                                       std::vector<std::unique_ptr<Transport>>* out);

struct TransportEntry {
  const char* name;
  TransportFactory make;
  // Whether its register_region appends a record to handles (append_handle_record): a handle
  // carrying a record of any other transport id is refused.
  bool handle_records = false;
};

// The registry: at most kMaxTransports entries; an entry's index is its transports' id.
const std::vector<TransportEntry>& transport_registry();
// The id of the transport called `name`, or -1.
int transport_id(const char* name);
// A bit per transport id whose transport writes handle records.
uint32_t handle_record_ids();

}  // namespace tca
