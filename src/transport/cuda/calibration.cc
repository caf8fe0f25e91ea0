#include "transport/cuda/calibration.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "transport/cuda/cuda_util.h"

namespace tca {
namespace {

constexpr int kCalibrationVersion = 4;
constexpr uint64_t kSmallestSize = 64;
constexpr int kTrials = 3;

// Seconds per transfer of `bytes` with its notification, kicked and waited for one at a time
// as a host-kicked chain in a ping-pong is (launch and completion costs included): the best of
// a few trials.
tcaResult time_engine(Engine engine, unsigned char* dst, const unsigned char* src, uint64_t bytes,
                      const NotifyTarget& notify, const DeviceLimits& limits,
                      cudaStream_t stream, double* seconds) {
  DevicePiece piece;
  piece.dst = dst;
  piece.src = src;
  piece.width = piece.dst_pitch = piece.src_pitch = bytes;
  piece.notifies.push_back(notify);
  std::unique_ptr<GpuChain> chain;
  TCA_CHECK(make_gpu_chain(engine, {piece}, limits, &chain));
  const int kicks = static_cast<int>(std::clamp<uint64_t>(kCalibrationBytes / bytes, 3, 50));
  uint64_t value = 0;
  const auto kick = [&]() -> tcaResult {
    ++value;
    return chain->host_counted() ? chain->kick(stream, &value) : chain->enqueue(stream);
  };
  for (int i = 0; i < 2; ++i) TCA_CHECK(kick());  // warm-up
  TCA_CUDA_CHECK(cudaStreamSynchronize(stream));
  *seconds = 1e30;
  for (int trial = 0; trial < kTrials; ++trial) {
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < kicks; ++i) {
      TCA_CHECK(kick());
      TCA_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - begin;
    *seconds = std::min(*seconds, took.count() / kicks);
  }
  return TCA_SUCCESS;
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

tcaResult make_directories(const std::string& file) {
  for (size_t slash = file.find('/', 1); slash != std::string::npos;
       slash = file.find('/', slash + 1)) {
    const std::string directory = file.substr(0, slash);
    if (mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot create {}: {}", directory, std::strerror(errno));
  }
  return TCA_SUCCESS;
}

}  // namespace

tcaResult fill_random(void* device, size_t bytes) {
  std::vector<uint64_t> words((bytes + 7) / 8);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (uint64_t& word : words) {  // xorshift64
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    word = state;
  }
  TCA_CUDA_CHECK(cudaMemcpy(device, words.data(), bytes, cudaMemcpyHostToDevice));
  TCA_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  return TCA_SUCCESS;
}

tcaResult measure_pair(unsigned char* dst, const unsigned char* src, const DeviceLimits& limits,
                       cudaStream_t stream, PairCalibration* out) {
  out->sizes.clear();
  out->ce_gbps.clear();
  out->sm_gbps.clear();
  // The notifications land in a scratch counter and cell of pinned host memory, as real ones
  // land in a control block.
  void* scratch = nullptr;
  TCA_CUDA_CHECK(cudaHostAlloc(&scratch, 2 * sizeof(uint64_t), cudaHostAllocMapped));
  const PinnedHostMemory scratch_owner(scratch);
  void* scratch_device = nullptr;
  TCA_CUDA_CHECK(cudaHostGetDevicePointer(&scratch_device, scratch, 0));
  const NotifyTarget notify{static_cast<uint64_t*>(scratch_device),
                            static_cast<uint64_t*>(scratch_device) + 1};
  for (uint64_t bytes = kSmallestSize; bytes <= kCalibrationBytes; bytes *= 2) {
    double ce = 0;
    double sm = 0;
    TCA_CHECK(time_engine(Engine::kCopyEngine, dst, src, bytes, notify, limits, stream, &ce));
    TCA_CHECK(time_engine(Engine::kSm, dst, src, bytes, notify, limits, stream, &sm));
    out->sizes.push_back(bytes);
    out->ce_gbps.push_back(static_cast<double>(bytes) / ce * 1e-9);
    out->sm_gbps.push_back(static_cast<double>(bytes) / sm * 1e-9);
  }
  out->crossover = crossover_of(*out);
  return TCA_SUCCESS;
}

uint64_t crossover_of(const PairCalibration& pair) {
  // Walk down from the largest size while the copy engines win.
  size_t first_ce = pair.sizes.size();
  while (first_ce > 0 && pair.ce_gbps[first_ce - 1] >= pair.sm_gbps[first_ce - 1]) --first_ce;
  if (first_ce == pair.sizes.size()) return kNeverCopyEngine;
  return first_ce == 0 ? 0 : pair.sizes[first_ce];
}

std::string calibration_path() {
  if (const char* file = std::getenv("TCA_CUDA_CALIBRATION_FILE")) return file;
  std::string base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = std::string(home) + "/.cache";
  } else {
    return "";
  }
  return base + "/tca/calibration-" + host_name() + ".json";
}

void CalibrationCache::load(const std::string& path) {
  pairs_.clear();
  std::ifstream in(path);
  if (!in) return;
  const nlohmann::json document = nlohmann::json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.is_object() ||
      document.value("version", 0) != kCalibrationVersion || !document.contains("pairs")) {
    TCA_WARN("ignoring calibration file {}: not a version {} calibration", path,
             kCalibrationVersion);
    return;
  }
  for (const auto& entry : document["pairs"]) {
    PairCalibration pair;
    try {
      entry.at("src").get_to(pair.src_uuid);
      entry.at("dst").get_to(pair.dst_uuid);
      entry.at("sizes").get_to(pair.sizes);
      entry.at("ce_gbps").get_to(pair.ce_gbps);
      entry.at("sm_gbps").get_to(pair.sm_gbps);
      entry.at("crossover").get_to(pair.crossover);
    } catch (const nlohmann::json::exception&) {
      continue;  // a damaged entry is measured again
    }
    if (pair.sizes.size() == pair.ce_gbps.size() && pair.sizes.size() == pair.sm_gbps.size())
      put(pair);
  }
}

const PairCalibration* CalibrationCache::find(const std::string& src_uuid,
                                              const std::string& dst_uuid) const {
  for (const PairCalibration& pair : pairs_)
    if (pair.src_uuid == src_uuid && pair.dst_uuid == dst_uuid) return &pair;
  return nullptr;
}

void CalibrationCache::put(const PairCalibration& pair) {
  for (PairCalibration& existing : pairs_) {
    if (existing.src_uuid == pair.src_uuid && existing.dst_uuid == pair.dst_uuid) {
      existing = pair;
      return;
    }
  }
  pairs_.push_back(pair);
}

tcaResult CalibrationCache::save(const std::string& path) const {
  nlohmann::json document;
  document["version"] = kCalibrationVersion;
  document["host"] = host_name();
  document["pairs"] = nlohmann::json::array();
  for (const PairCalibration& pair : pairs_) {
    document["pairs"].push_back({{"src", pair.src_uuid},
                                 {"dst", pair.dst_uuid},
                                 {"crossover", pair.crossover},
                                 {"sizes", pair.sizes},
                                 {"ce_gbps", pair.ce_gbps},
                                 {"sm_gbps", pair.sm_gbps}});
  }
  TCA_CHECK(make_directories(path));
  const std::string temporary = fmt::format("{}.{}.tmp", path, getpid());
  {
    std::ofstream out(temporary);
    out << document.dump(1) << '\n';
    if (!out) TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot write {}", temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    std::remove(temporary.c_str());
    TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot rename {} to {}: {}", temporary, path,
             std::strerror(saved));
  }
  return TCA_SUCCESS;
}

}  // namespace tca
