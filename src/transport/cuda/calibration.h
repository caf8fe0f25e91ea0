// Which engine a transfer of a given size should take between two GPUs, measured on the
// machine: both engines copy the same bytes into the peer's memory at sizes 64 B .. 64 MiB, and
// the crossover is the smallest size from which the copy engines win at every larger size.
// Results are cached per host, keyed by the two GPUs' UUIDs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tca/tca.h"
#include "transport/cuda/engines.h"

namespace tca {

constexpr uint64_t kNeverCopyEngine = UINT64_MAX;  // a crossover no transfer reaches

struct PairCalibration {
  std::string src_uuid;
  std::string dst_uuid;
  std::vector<uint64_t> sizes;
  std::vector<double> ce_gbps;  // copy engines: bytes / (kick to completion), with a notification
  std::vector<double> sm_gbps;  // SM copy kernel, the same
  uint64_t crossover = 0;
};

// Times both engines copying src -> dst (each at least 64 MiB) on `stream`, one notifying
// transfer at a time.
tcaResult measure_pair(unsigned char* dst, const unsigned char* src, const DeviceLimits& limits,
                       cudaStream_t stream, PairCalibration* out);
constexpr uint64_t kCalibrationBytes = uint64_t{64} << 20;

// Fills device memory with pseudo-random bytes: engines are timed on data like real data
// (constant bytes can move faster than real ones).
tcaResult fill_random(void* device, size_t bytes);

// The smallest measured size from which the copy engines are faster at every larger size.
uint64_t crossover_of(const PairCalibration& pair);

// The calibration file: $TCA_CUDA_CALIBRATION_FILE, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/tca/calibration-<host>.json ("" when there is no home).
std::string calibration_path();

class CalibrationCache {
 public:
  // Reads the file; a missing or unreadable file is an empty cache, not an error.
  void load(const std::string& path);
  const PairCalibration* find(const std::string& src_uuid, const std::string& dst_uuid) const;
  void put(const PairCalibration& pair);
  // Writes the file atomically (a temporary, then rename).
  tcaResult save(const std::string& path) const;

 private:
  std::vector<PairCalibration> pairs_;
};

}  // namespace tca
