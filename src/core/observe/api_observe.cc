// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The observed forms of the dispatching calls (taken where observe::on(): counters, state, NVTX
// around the plain or traced call), and the C API of the observer: tcaDumpState,
// tcaGetCounters, tcaResetCounters.
#include "core/observe/api_observe.h"

#include <cstring>

#include "base/error.h"
#include "base/trace.h"
#include "base/trace_format.h"
#include "core/context.h"
#include "core/desc.h"
#include "core/observe/observe.h"
#include "core/observe/state.h"

namespace tca::observe {

tcaResult start_desc(Context& context, tcaDesc_st& chain, uintptr_t token) {
  dump_if_signalled(context);
  nvtx_push("tca kick", kColorKick);
  const uint64_t begin = timer_start(kTimedKick);
  const uint64_t trace_begin = trace::enabled() ? trace::now_ns() : 0;
  const tcaResult result = desc_start(context, chain);
  if (result == TCA_SUCCESS && trace::enabled())
    trace_kick(context, chain, token, trace_begin, trace::now_ns());
  kick(chain, token, begin, result);
  nvtx_pop();
  return result;
}

tcaResult wait_dmac(Context& context, int channel) {
  dump_if_signalled(context);
  nvtx_push("tca drain", kColorWait);
  const uint64_t trace_begin = trace::enabled() ? trace::now_ns() : 0;
  const tcaResult result = context.wait_channel(channel);
  if (result != TCA_SUCCESS) {
    drain_failed(context, result);
  } else {
    if (trace::enabled()) trace::drain(trace_begin, channel);
    if (timed_kicks_on(channel)) drain_timed(context, channel);
  }
  nvtx_pop();
  return result;
}

tcaResult wait_recv(Context& context, int src_rank, int slot, int* from) {
  dump_if_signalled(context);
  nvtx_push("tca wait", kColorWait);
  const uint64_t trace_begin = trace::enabled() ? trace::now_ns() : 0;
  wait_begin(src_rank, slot, timer_start(kTimedWait), false);
  int sender = src_rank;
  const tcaResult result = context.wait_notification(src_rank, slot, &sender);
  if (result == TCA_SUCCESS) {
    if (from != nullptr) *from = sender;
    if (trace::enabled()) trace::wait(trace_begin, src_rank, slot, sender);
  }
  wait_end(context, src_rank, slot, sender, true, result);
  nvtx_pop();
  return result;
}

tcaResult test_recv(Context& context, int src_rank, int slot, int* arrived, int* from) {
  dump_if_signalled(context);
  int sender = src_rank;
  const tcaResult result = context.test_notification(src_rank, slot, arrived, &sender);
  if (result == TCA_SUCCESS) {
    if (from != nullptr) *from = sender;
    if (trace::enabled()) {
      if (*arrived)
        trace::wait(trace::now_ns(), src_rank, slot, sender);
      else
        trace::test_missed(src_rank, slot);
    }
  }
  wait_end(context, src_rank, slot, sender, result == TCA_SUCCESS && *arrived, result);
  return result;
}

tcaResult put_or_get(Context& context, const Transfer& transfer, bool put) {
  dump_if_signalled(context);
  nvtx_push(put ? "tca put" : "tca get", kColorKick);
  const uint64_t begin = timer_start(kTimedPutGet);
  const tcaResult result =
      run_traced(context, transfer, put ? trace_format::kPut : trace_format::kGet);
  put_get(context, transfer, put, begin, result);
  nvtx_pop();
  return result;
}

tcaResult notify_peer(Context& context, int dst_rank, int slot) {
  dump_if_signalled(context);
  nvtx_push("tca notify", kColorNotify);
  const uint64_t trace_begin = trace::enabled() ? trace::now_ns() : 0;
  const tcaResult result = context.notify(dst_rank, slot);
  if (result == TCA_SUCCESS && trace::enabled())
    trace::notify(trace_begin, dst_rank, slot, context.default_transport(dst_rank)->name());
  notify(dst_rank, result);
  nvtx_pop();
  return result;
}

}  // namespace tca::observe

extern "C" {

tcaResult tcaDumpState(FILE* file) {
  tca::Context* context = tca::current_context();
  if (context == nullptr) TCA_FAIL(TCA_ERROR_NOT_INITIALIZED, "call tcaInit first");
  if (file == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "file is NULL");
  tca::observe::dump_state(*context, file, "tcaDumpState");
  return TCA_SUCCESS;
}

tcaResult tcaGetCounters(char* json, size_t* bytes) {
  tca::Context* context = tca::current_context();
  if (context == nullptr) TCA_FAIL(TCA_ERROR_NOT_INITIALIZED, "call tcaInit first");
  if (bytes == nullptr) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  if (!tca::observe::counting())
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "counters are off: set TCA_COUNTERS=1 or TCA_STATS");
  const std::string text = tca::observe::counters_json(*context);
  const size_t needed = text.size() + 1;
  if (json == nullptr) {
    *bytes = needed;
    return TCA_SUCCESS;
  }
  if (*bytes < needed) {
    const size_t given = *bytes;
    *bytes = needed;
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "the counters need {} bytes, the buffer has {}", needed,
             given);
  }
  std::memcpy(json, text.c_str(), needed);
  *bytes = needed;
  return TCA_SUCCESS;
}

tcaResult tcaResetCounters(void) {
  if (tca::current_context() == nullptr) TCA_FAIL(TCA_ERROR_NOT_INITIALIZED, "call tcaInit first");
  if (!tca::observe::counting())
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "counters are off: set TCA_COUNTERS=1 or TCA_STATS");
  tca::observe::reset_counters(*tca::current_context());
  return TCA_SUCCESS;
}

}  // extern "C"
