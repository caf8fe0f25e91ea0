// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "transport/cuda/pair_calibration.h"

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
#include <vector>

#include "base/cache_file.h"
#include "base/cuda_util.h"
#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"

namespace tca {
namespace {

// 6: SM launches spread over more blocks (5: a ping-pong at every size, each size picking its
// engine; 4: one-way kicks, one crossover).
constexpr int kCalibrationVersion = 6;
constexpr uint64_t kSmallestSize = 64;
// Trials per engine and size, of which the median counts (as tca-pingpong reports the median of
// its batches: the best trial would credit an engine with its rare fast runs).
constexpr int kTrials = 5;
// Round trips per trial: about this many bytes each way, within [4, 30].
constexpr uint64_t kTrialBytes = uint64_t{32} << 20;

// One message as a ping-pong sends it: kick, then wait for local completion (tcaStartDMADesc
// and tcaWaitDMAC).
tcaResult send_message(GpuChain& chain, const PingPongSide& side, cudaStream_t stream) {
  if (chain.host_counted()) {
    const uint64_t value = side.next_value();
    TCA_CHECK(chain.kick(stream, &value));
  } else {
    TCA_CHECK(chain.enqueue(stream));
  }
  TCA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return TCA_SUCCESS;
}

// `rounds` round trips; *seconds: per message, half a round trip (on the initiator).
tcaResult run_trial(GpuChain& chain, const PingPongSide& side, int rounds, cudaStream_t stream,
                    double* seconds) {
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds; ++i) {
    if (side.initiator) {
      TCA_CHECK(send_message(chain, side, stream));
      TCA_CHECK(side.wait_for_peer());
    } else {
      TCA_CHECK(side.wait_for_peer());
      TCA_CHECK(send_message(chain, side, stream));
    }
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - begin;
  *seconds = took.count() / (side.alone ? rounds : 2.0 * rounds);
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
  return copy_and_wait(device, words.data(), bytes);
}

tcaResult measure_pingpong(const PingPongSide& side, const DeviceLimits& limits,
                           cudaStream_t stream, PairCalibration* out) {
  out->sizes.clear();
  out->ce_gbps.clear();
  out->sm_gbps.clear();
  for (uint64_t bytes = kSmallestSize; bytes <= side.largest; bytes *= 2) {
    DevicePiece piece;
    piece.dst = side.dst;
    piece.src = side.src;
    piece.width = piece.dst_pitch = piece.src_pitch = bytes;
    piece.notifies.push_back(side.notify);
    const Engine engines[2] = {Engine::kCopyEngine, Engine::kSm};
    std::unique_ptr<GpuChain> chains[2];
    for (int e = 0; e < 2; ++e) TCA_CHECK(make_gpu_chain(engines[e], {piece}, limits, &chains[e]));
    const int rounds = static_cast<int>(std::clamp<uint64_t>(kTrialBytes / bytes, 4, 30));
    std::vector<double> trials[2];
    double seconds = 0;
    for (int e = 0; e < 2; ++e) TCA_CHECK(run_trial(*chains[e], side, 1, stream, &seconds));
    // Trials of the two engines alternate, so that a slow spell of the machine hits both.
    for (int trial = 0; trial < kTrials; ++trial) {
      for (int e = 0; e < 2; ++e) {
        TCA_CHECK(run_trial(*chains[e], side, rounds, stream, &seconds));
        trials[e].push_back(seconds);
      }
    }
    double median[2] = {};
    for (int e = 0; e < 2; ++e) {
      std::nth_element(trials[e].begin(), trials[e].begin() + kTrials / 2, trials[e].end());
      median[e] = trials[e][kTrials / 2];
    }
    out->sizes.push_back(bytes);
    out->ce_gbps.push_back(static_cast<double>(bytes) / median[0] * 1e-9);
    out->sm_gbps.push_back(static_cast<double>(bytes) / median[1] * 1e-9);
  }
  return TCA_SUCCESS;
}

std::string calibration_path() {
  return cache_file("TCA_CUDA_CALIBRATION_FILE", "calibration", ".json");
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
    } catch (const nlohmann::json::exception&) {
      continue;  // a damaged entry is measured again
    }
    if (!pair.sizes.empty() && std::is_sorted(pair.sizes.begin(), pair.sizes.end()) &&
        pair.sizes.size() == pair.ce_gbps.size() && pair.sizes.size() == pair.sm_gbps.size())
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
                                 {"sizes", pair.sizes},
                                 {"ce_gbps", pair.ce_gbps},
                                 {"sm_gbps", pair.sm_gbps}});
  }
  TCA_CHECK(make_parent_folders(path));
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
