// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The measurement behind the choice between copy engines and SMs (tuning/engine_choice.h), made on
// the machine the way a ping-pong uses a host-kicked chain: at every size from 64 B up, both ranks
// of a pair take turns sending a notifying transfer into the other's GPU memory (kick, wait for
// local completion, then wait for the peer's answer), once on each engine. Each calibrated size
// then picks the engine with the shorter half round trip; sizes in between take the pick of
// the nearest calibrated size below. Results are cached per host, keyed by the two GPUs' UUIDs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "transport/cuda/copy_paths.h"
#include "tuning/engine_choice.h"

namespace tca {

using tuning::kNeverCopyEngine;
// The largest size calibrated (where both GPUs have room for it; less otherwise).
constexpr uint64_t kCalibrationBytes = uint64_t{256} << 20;

// One pair's calibration: the GPUs' UUIDs and the rates (tuning/engine_choice.h chooses by them).
struct PairCalibration : tuning::EngineRates {
  std::string src_uuid;
  std::string dst_uuid;

  // The faster engine at the largest calibrated size not above `bytes` (at the smallest one
  // for smaller transfers).
  Engine pick(uint64_t bytes) const {
    return copy_engine_at(bytes) ? Engine::kCopyEngine : Engine::kSm;
  }
};

// One rank's side of the calibration ping-pong with a peer, or with itself.
struct PingPongSide {
  unsigned char* dst = nullptr;              // the peer's landing buffer, device address here
  const unsigned char* src = nullptr;        // this rank's source (random bytes)
  uint64_t largest = 0;                      // the largest size both buffers hold, a power of two
  NotifyTarget notify = {};                  // the peer's notification cell, this rank's counter
  std::function<uint64_t()> next_value;      // the host-counted value of the next notification
  std::function<tcaResult()> wait_for_peer;  // returns once the peer's next message is here
  bool initiator = false;  // sends first and times the round trips; the responder answers
  bool alone = false;      // the peer is this rank: every message is sent and awaited here
};

// Runs the ping-pong at every size on both engines (both sides run it together); the
// initiator's `out` gets the sizes and rates.
tcaResult measure_pingpong(const PingPongSide& side, const DeviceLimits& limits,
                           cudaStream_t stream, PairCalibration* out);

// Fills device memory with pseudo-random bytes: engines are timed on data like real data
// (constant bytes can move faster than real ones).
tcaResult fill_random(void* device, size_t bytes);

// The calibration file: $TCA_CUDA_CALIBRATION_FILE, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/tca/calibration-<host>.json ("" when there is no home).
std::string calibration_path();

class CalibrationCache {
 public:
  // Reads the file; a missing or unreadable file, or one of another format version (an
  // earlier method of measuring), is an empty cache, not an error.
  void load(const std::string& path);
  const PairCalibration* find(const std::string& src_uuid, const std::string& dst_uuid) const;
  void put(const PairCalibration& pair);
  // Writes the file atomically (a temporary, then rename).
  tcaResult save(const std::string& path) const;

 private:
  std::vector<PairCalibration> pairs_;
};

}  // namespace tca
