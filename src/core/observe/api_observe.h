// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The observed forms of the dispatching API calls (api.cc takes them where observe::on()).
#pragma once

#include <cstdint>

#include "tca/tca.h"

struct tcaDesc_st;

namespace tca {
class Context;
struct Transfer;
}  // namespace tca

namespace tca::observe {

tcaResult start_desc(Context& context, tcaDesc_st& chain, uintptr_t token);
tcaResult wait_dmac(Context& context, int channel);
tcaResult wait_recv(Context& context, int src_rank, int slot, int* from);
tcaResult test_recv(Context& context, int src_rank, int slot, int* arrived, int* from);
tcaResult put_or_get(Context& context, const Transfer& transfer, bool put);
tcaResult notify_peer(Context& context, int dst_rank, int slot);

}  // namespace tca::observe
