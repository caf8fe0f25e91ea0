// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The C API of tca/tca_trace.h: whether the trace is on, and the applications' phases, which go
// to both the trace writer (base/trace.h) and the observer's NVTX ranges (core/observe).
#include "base/trace.h"
#include "core/observe/observe.h"
#include "tca/tca_trace.h"

extern "C" {

int tcaTraceEnabled(void) { return tca::trace::enabled() ? 1 : 0; }

// A phase goes to the trace (TCA_TRACE) and, as an NVTX range of the "phase" category, to
// Nsight Systems (TCA_NVTX=1); each costs a load and a branch while it is off.
void tcaTracePhaseBegin(const char* name) {
  if (name == nullptr) return;
  if (tca::trace::enabled()) tca::trace::phase(true, name);
  if (tca::observe::on()) tca::observe::phase(true, name);
}

void tcaTracePhaseEnd(const char* name) {
  if (name == nullptr) return;
  if (tca::trace::enabled()) tca::trace::phase(false, name);
  if (tca::observe::on()) tca::observe::phase(false, name);
}

}  // extern "C"
