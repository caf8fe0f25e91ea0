// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// GPU collectives: the schedule of every channel lowered to a program that a kernel runs
// (tca/tca_coll_device.cuh), instead of host actions. Built in CUDA builds only (device_engine.cc);
// the header carries no CUDA types so that the rest of src/coll does not depend on CUDA.
#pragma once

#include <cstddef>
#include <memory>

#include "coll/schedule.h"
#include "tca/tca_coll.h"

namespace tca::coll {

struct DeviceBuffers {
  tcaDataType type = TCA_DOUBLE;
  tcaRedOp op = TCA_SUM;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t recv_bytes = 0;
  unsigned resident_idle_us = 0;  // tcaCollConfig's
  tcaTeam team = TCA_TEAM_WORLD;  // the ranks of the program; peers count within it
};

class DeviceEngine {
 public:
  virtual ~DeviceEngine() = default;
  // Host-called iterations: launch on the engine's stream (after the legacy default stream's work),
  // or ring the resident kernel's doorbell, then poll or wait for the end.
  virtual tcaResult start() = 0;
  virtual tcaResult test(bool* done) = 0;
  virtual tcaResult wait() = 0;
  // One iteration enqueued on a cudaStream_t; with `stamps` (else nullptr: Program::stamps,
  // host-mapped, 2 words per channel, zeroed) its blocks leave their start and end there.
  virtual tcaResult enqueue(void* stream, uint64_t* stamps) = 0;
  virtual tcaResult device_handle(void** program, int* blocks) = 0;
  virtual bool inline_protocol() const = 0;
  virtual int channels() const = 0;
  // How start() began the running iteration: "resident" (the resident kernel's doorbell),
  // "resident_start" (the resident kernel launched for it) or "launch" (the program launched).
  virtual const char* call_form() const = 0;
  // A synchronous copy between device buffers of this GPU.
  virtual tcaResult copy(void* dst, const void* src, size_t bytes) = 0;
  // Frees everything (local: the caller has made sure no peer still writes here).
  virtual tcaResult release() = 0;
  // Whether its registrations belong to the running tca job (see tcaColl_st).
  virtual bool belongs_to_current_job() const = 0;
};

// Collective: every rank passes the same shape.
tcaResult make_device_engine(const Shape& shape, const DeviceBuffers& buffers,
                             std::unique_ptr<DeviceEngine>* out);

}  // namespace tca::coll
