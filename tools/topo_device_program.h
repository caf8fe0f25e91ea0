// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-topo's measurements of the GPU programs that run tca's GPU collectives, from which tca-sim
// takes a host-called GPU collective's own costs (docs/SIM.md, "Fabric descriptions"):
//   - an 8-byte allreduce (recursive doubling and ring), host-called through the resident kernel
//     and with a launch per call, and the same program replayed in a CUDA graph (the per-call
//     cost is the difference; the graph forms of the two algorithms give the cost per step);
//   - one block (and a few) storing into the next rank's GPU (the rate of a channel's block).
#pragma once

#include <cstdio>
#include <functional>

#include "tca_harness/report.h"

namespace tca_tools {

// Collective: every rank calls. Rank 0 prints the tables to `text` and passes the rows
// (tables "gpu_collective" and "block_store") to `add_row`.
void measure_device_programs(int rank, int size, std::FILE* text,
                             const std::function<void(nlohmann::ordered_json)>& add_row);

}  // namespace tca_tools
