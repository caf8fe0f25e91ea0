// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The C API of tca/tca_coll_cuda.h: GPU collectives enqueued on streams or run by kernels.
#include "base/trace.h"
#include "coll/collective.h"
#include "coll/status.h"
#include "coll/stream_trace.h"
#include "core/reserved.h"
#include "tca/tca_coll_cuda.h"

namespace {

// The GPU program of a live GPU collective (null when it has zero elements). With `to_run`, also
// that the object can run an iteration now.
tcaResult gpu_program(tcaColl coll, bool to_run, tca::coll::DeviceEngine** engine) {
  TCA_CHECK(tca::coll::check_live(coll));
  if (!coll->on_gpu())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "collective {} has host buffers: the stream and device forms need "
             "config.memory = "
             "TCA_MEM_GPU",
             static_cast<const void*>(coll));
  if (to_run && coll->failed())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "an earlier iteration of this collective failed; free it and make "
             "a new one");
  if (to_run && coll->running() && !coll->host_scheduled())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "a host-called iteration of the collective is running: "
             "tcaCollWait first");
  *engine = coll->device();
  return TCA_SUCCESS;
}

// Whether `stream` is being captured into a CUDA graph (a failed query counts as not).
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) cudaGetLastError();
  return capture != cudaStreamCaptureStatusNone;
}

}  // namespace

extern "C" {

tcaResult tcaCollStartStream(tcaColl coll, cudaStream_t stream) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  tca::coll::DeviceEngine* engine = nullptr;
  TCA_CHECK(gpu_program(coll, true, &engine));
  if (!coll->host_scheduled()) {
    if (engine == nullptr) return TCA_SUCCESS;
    if (tca::trace::enabled() && !capturing(stream))
      return tca::coll::enqueue_traced(*coll, stream);
    return engine->enqueue(stream, nullptr);
  }
  // The host runs this schedule: it waits for the stream's earlier work, then runs the whole
  // iteration, so that work the caller enqueues after this call finds its result. That cannot
  // be recorded into a CUDA graph (a graph's host function may not call CUDA).
  if (capturing(stream))
    TCA_FAIL(TCA_ERROR_UNSUPPORTED,
             "collective {} spans ranks that CUDA IPC does not reach (other hosts): the host runs "
             "each iteration, which a stream being captured into a CUDA graph cannot hold",
             static_cast<const void*>(coll));
  const cudaError_t synced = cudaStreamSynchronize(stream);
  if (synced != cudaSuccess) {
    cudaGetLastError();
    TCA_FAIL(TCA_ERROR_TRANSPORT, "cudaStreamSynchronize before a host-run collective: {}",
             cudaGetErrorString(synced));
  }
  TCA_CHECK(tcaCollStart(coll));
  return tcaCollWait(coll);
}

tcaResult tcaCollDeviceHandle(tcaColl coll, tcaDeviceColl* handle, int* blocks, int* min_threads) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  if (handle == nullptr || blocks == nullptr || min_threads == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "handle, blocks or min_threads is NULL");
  tca::coll::DeviceEngine* engine = nullptr;
  TCA_CHECK(gpu_program(coll, true, &engine));
  if (coll->host_scheduled())
    TCA_FAIL(TCA_ERROR_UNSUPPORTED,
             "collective {} spans ranks that CUDA IPC does not reach (other hosts): the host runs "
             "it (tcaCollStart, tcaCollStartStream), a kernel cannot",
             static_cast<const void*>(coll));
  if (engine == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "collective {} has zero elements: there is no program to run",
             static_cast<const void*>(coll));
  void* program = nullptr;
  TCA_CHECK(engine->device_handle(&program, blocks));
  *handle = static_cast<tcaDeviceColl>(program);
  *min_threads = 32;  // any whole number of warps works; more threads move data faster
  return TCA_SUCCESS;
}

tcaResult tcaCollGetProtocol(tcaColl coll, int* ll, int* channels) {
  tca::ReservedScope reserved;  // collectives use tca's own slots and channel
  if (ll == nullptr || channels == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "ll or channels is NULL");
  tca::coll::DeviceEngine* engine = nullptr;
  TCA_CHECK(gpu_program(coll, false, &engine));
  *ll = engine != nullptr && engine->inline_protocol() ? 1 : 0;
  *channels = engine != nullptr ? engine->channels() : 0;
  return TCA_SUCCESS;
}

}  // extern "C"
