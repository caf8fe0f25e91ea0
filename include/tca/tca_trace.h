// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/*
 * tca — application phases in traces.
 *
 * With TCA_TRACE=DIR in the environment, every rank writes DIR/rank-R.trace: what tca did
 * (kicks and the transfers of each chain, puts, gets, PIO pointers, notifications, waits,
 * collectives) with steady-clock timestamps (docs/SIM.md describes the format). These calls add
 * the application's own phases to it, so a replay (tca-sim) can break the run's time down the
 * way the application does. With TCA_NVTX=1 they are also NVTX ranges of the "phase" category
 * in the domain "tca" (Nsight Systems; docs/OPERATING.md). Without either setting, or before
 * tcaInit and after tcaFinalize, they do nothing and cost a branch. Names are short words without
 * spaces ("COMM.OUT", "SPMV"); other characters are written as '_'.
 */
#ifndef TCA_TCA_TRACE_H
#define TCA_TCA_TRACE_H

#include "tca/tca.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 while this rank writes a trace, else 0. */
TCA_API int tcaTraceEnabled(void);
/* Marks the start and the end of a phase named `name` (phases may nest; NULL is ignored). */
TCA_API void tcaTracePhaseBegin(const char* name);
TCA_API void tcaTracePhaseEnd(const char* name);

#ifdef __cplusplus
}
#endif

#endif /* TCA_TCA_TRACE_H */
