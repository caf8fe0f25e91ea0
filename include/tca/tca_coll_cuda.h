// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/*
 * tca collectives on GPU buffers: stream-ordered and device-initiated forms (CUDA builds).
 *
 * A collective made with config.memory = TCA_MEM_GPU runs as one GPU program per iteration:
 * every step of its algorithm (stores into the peers' GPU memory, waits for their signals,
 * reductions) is executed by a kernel, with no host in the loop. The same iteration can be
 *   - host-called:      tcaCollStart ... tcaCollTest / tcaCollWait (tca_coll.h), which
 *                       launches it on an internal stream that follows the legacy default
 *                       stream, and waits for it (with tcaCollConfig.resident_idle_us, a
 *                       kernel that stays on the GPU runs it instead, when nothing is pending
 *                       on the legacy default stream);
 *   - stream-ordered:   tcaCollStartStream(coll, stream), which only enqueues it (capturable in
 *                       a CUDA graph: every replay runs one more iteration);
 *   - device-initiated: tcaDeviceCollRun (tca/tca_coll_device.cuh) called inside a user kernel,
 *                       e.g. a persistent one, with the handle from tcaCollDeviceHandle.
 * The forms may be mixed on one object as long as its iterations do not overlap. Every rank
 * runs the same number of iterations. Unlike host-memory collectives, GPU collectives of
 * different objects may be in flight at the same time (each has its own signals and scratch).
 *
 * A wait inside the program that outlives tca's timeout (tcaSetTimeout) ends the iteration
 * early; the next call on the object (tcaCollWait, tcaCollTest, tcaCollStart,
 * tcaCollStartStream, tcaCollDeviceHandle) then fails with TCA_ERROR_TIMEOUT and the object can
 * only be freed.
 *
 * Environment (must be the same on every rank): TCA_COLL_PROTOCOL=ll|simple|auto chooses how
 * steps move data (ll: data and flag in one 8-byte store, for small messages; simple: wide
 * stores, then a signal); TCA_COLL_CHANNELS=<n> sets the number of blocks that split the data.
 */
#ifndef TCA_TCA_COLL_CUDA_H
#define TCA_TCA_COLL_CUDA_H

#include <cuda_runtime_api.h>

#include "tca/tca_coll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The device address of a GPU collective's program, for tcaDeviceCollRun. */
typedef struct tcaDeviceColl_st* tcaDeviceColl;

/* Enqueues one whole iteration of a GPU collective on `stream`: it starts after the work
 * enqueued before it (so sendbuf may be produced by an earlier kernel) and the work enqueued
 * after it sees the result in recvbuf. */
TCA_API tcaResult tcaCollStartStream(tcaColl coll, cudaStream_t stream);

/* What a kernel needs to run iterations itself: the program's address and the number of
 * blocks that must call tcaDeviceCollRun (blocks 0 .. *blocks-1 of the calling grid, every
 * thread of each; at least *min_threads threads per block). */
TCA_API tcaResult tcaCollDeviceHandle(tcaColl coll, tcaDeviceColl* handle, int* blocks,
                                      int* min_threads);

/* How a GPU collective moves its data: protocol (0: simple, 1: ll) and channels (blocks). */
TCA_API tcaResult tcaCollGetProtocol(tcaColl coll, int* ll, int* channels);

#ifdef __cplusplus
}
#endif

#endif /* TCA_TCA_COLL_CUDA_H */
