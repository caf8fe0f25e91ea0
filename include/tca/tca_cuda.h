// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/*
 * tca CUDA API, host side: GPU memory is registered like host memory (tcaMalloc/tcaCreateHandle
 * with TCA_MEM_GPU, see tca.h); this header adds what only GPUs have.
 *
 * One rank per GPU: tcaInit gives each rank the device (ranks of this host before it) % (devices
 * visible) and makes it current on the calling thread. Chains with an end in GPU memory take
 * the CUDA path (TCA_PATH_CUDA picks copy engines or SMs per size from a calibration measured
 * on the machine; TCA_PATH_CUDA_CE / TCA_PATH_CUDA_SM force one; TCA_PATH_CUDA_RESIDENT takes
 * the SMs and serves small host kicks from a resident kernel). docs/CUDA.md says more.
 *
 * Environment: TCA_CUDA_PATH=auto|ce|sm forces the engine of TCA_PATH_CUDA;
 * TCA_CUDA_CROSSOVER=<bytes> replaces the measured per-size choice by one crossover (copy
 * engines from that size on, SMs below); TCA_CUDA_CALIBRATE=1 measures again and rewrites the
 * cache; TCA_CUDA_CALIBRATION_FILE names the cache file; TCA_CUDA_RESIDENT_IDLE_US (1 to
 * 1000000, default 1000) is how long the resident kernel waits for a kick before it leaves
 * (while it runs, cudaDeviceSynchronize and a cudaFree of the application wait for it).
 */
#ifndef TCA_TCA_CUDA_H
#define TCA_TCA_CUDA_H

#include <cuda_runtime_api.h>

#include "tca/tca.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TCA_DEVICE_SIGNALS 1024 /* signal cells per rank for the device API */

/* The CUDA device of this rank; TCA_ERROR_UNSUPPORTED where the rank has no GPU. */
TCA_API tcaResult tcaCudaDevice(int* device);

/* ---- stream ordering: both calls only enqueue, and both can be captured in a CUDA graph ---- */
/* Runs a bound chain (every transfer on a CUDA path) in `stream` order: after the work
 * enqueued before it, before the work enqueued after it. Completion is the stream's. Under
 * capture the chain joins the captured graph, which must not outlive the descriptor. */
TCA_API tcaResult tcaStartDMADescStream(tcaDesc desc, cudaStream_t stream);
/* Holds `stream` until the next notification on `slot` from `src_rank` (not TCA_ANY_RANK) has
 * arrived, and consumes it: the notifying chain's data is then visible to later work in the
 * stream. Each launch (each replay of a captured graph) consumes one notification. A wait that
 * outlives the timeout releases the stream and the next tca CUDA call fails with
 * TCA_ERROR_TIMEOUT. */
TCA_API tcaResult tcaWaitDMARecvDescStream(int src_rank, int slot, cudaStream_t stream);

/* ---- device API (tca/tca_device.cuh) ---- */
/* An address through which kernels of this rank load and store [offset, offset+bytes) of a
 * registered region: a peer's GPU memory (peer mapping), its own, or host memory mapped for
 * the GPU. Valid until the region's owner frees it. */
TCA_API tcaResult tcaDevicePointer(void** ptr, const tcaHandle* handle, size_t offset,
                                   size_t bytes);
/* The address of signal cell `index` (< TCA_DEVICE_SIGNALS) of `rank`, for kernels of this
 * rank: to signal a peer, or to wait on one's own cells. Cells start at 0. */
TCA_API tcaResult tcaDeviceSignal(uint64_t** signal, int rank, int index);

/* ---- automatic path choice ---- */
/* TCA_PATH_CUDA picks an engine per peer and size from a calibration: at each calibrated size
 * (64 B, 128 B, ... up to 256 MiB) the engine that was faster in a ping-pong of host-kicked
 * notifying transfers with the peer; a size between two calibrated ones takes the pick of the
 * one below it. Block-stride transfers with rows under 512 bytes take the SMs. */

/* The size from which every larger contiguous transfer to `peer` takes the copy engines on
 * TCA_PATH_CUDA (0: every size; SIZE_MAX: the largest sizes take the SMs). Below it the pick is
 * per size: see tcaCudaAutoPath. Reflects TCA_CUDA_PATH and TCA_CUDA_CROSSOVER (then it is the
 * whole rule: the SMs below it). */
TCA_API tcaResult tcaCudaCrossover(int peer, size_t* bytes);
/* The engine TCA_PATH_CUDA takes for one contiguous transfer of `bytes` to `peer`:
 * TCA_PATH_CUDA_CE or TCA_PATH_CUDA_SM. */
TCA_API tcaResult tcaCudaAutoPath(int peer, size_t bytes, tcaPath* path);

/* One size of the calibration: both engines' bandwidth for one contiguous notifying transfer
 * into the peer's GPU memory, in a ping-pong with the peer (bytes over half a round trip; each
 * message kicked, completed locally, then answered). */
typedef struct tcaCudaCalibrationPoint {
  size_t bytes;
  double copy_engine_gbps;
  double sm_gbps;
} tcaCudaCalibrationPoint;
/* The calibration measured (or read from the cache) for `peer`: up to `capacity` points into
 * `points`, their number into *count (0 where none was measured). */
TCA_API tcaResult tcaCudaCalibration(int peer, tcaCudaCalibrationPoint* points, int capacity,
                                     int* count);

#ifdef __cplusplus
}
#endif

#endif /* TCA_TCA_CUDA_H */
