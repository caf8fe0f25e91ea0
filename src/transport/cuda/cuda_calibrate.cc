// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The copy-engine/SM calibration run at start-up (or read from the cache).
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "tca/tca_cuda.h"
#include "transport/cuda/cuda_transport_impl.h"
#include "transport/job.h"

namespace tca {

namespace {

bool refresh_requested() {
  std::string value;
  return setting_choice("TCA_CUDA_CALIBRATE", &value) == TCA_SUCCESS && value == "1";
}

}  // namespace

// Collective. A pair of ranks is measured when either lacks its calibration (or a refresh is
// asked for); both ranks of the pair take part, since the measurement is a ping-pong.
tcaResult CudaTransportImpl::calibrate() {
  const int size = job_.size();
  const std::string path = calibration_path();
  CalibrationCache cache;
  if (!path.empty()) cache.load(path);
  const bool refresh = refresh_requested();
  const bool overridden = engine_choice_.overridden();
  // Row `rank` of each matrix: what that rank says of each peer.
  std::vector<uint8_t> mine(2 * size, 0);
  for (int peer = 0; peer < size; ++peer) {
    mine[peer] = peers_[peer].reachable ? 1 : 0;
    mine[size + peer] = peers_[peer].reachable && !overridden &&
                        (refresh || cache.find(uuid_, peers_[peer].uuid) == nullptr);
  }
  std::vector<uint8_t> all(static_cast<size_t>(size) * 2 * size);
  TCA_CHECK(job_.bootstrap().allgather(mine.data(), all.data(), mine.size()));
  const auto said = [&](int rank, int peer, int matrix) {
    return all[static_cast<size_t>(rank) * 2 * size + matrix * size + peer] != 0;
  };
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < size; ++a)
    for (int b = a; b < size; ++b)
      if (said(a, b, 0) && said(b, a, 0) && (said(a, b, 1) || said(b, a, 1)))
        pairs.emplace_back(a, b);
  if (!pairs.empty()) TCA_CHECK(measure_pairs(pairs, &cache, path));

  for (int peer = 0; peer < size; ++peer) {
    const PairCalibration* pair = cache.find(uuid_, peers_[peer].uuid);
    if (peers_[peer].reachable && pair != nullptr) peers_[peer].calibration = *pair;
  }
  return TCA_SUCCESS;
}

namespace {

// What the initiating rank of a calibrated pair tells every rank.
struct MeasuredPair {
  char uuids[2][48];  // the initiator's GPU, the responder's
  uint32_t count;
  uint64_t sizes[32];
  double ce_gbps[32];
  double sm_gbps[32];
};

}  // namespace

// Collective. Every rank with a GPU lends a landing buffer and a source; the pairs measure one
// after another, so that no two measurements share a link. Every rank learns every result and
// the lowest rank of each host writes the cache file.
tcaResult CudaTransportImpl::measure_pairs(const std::vector<std::pair<int, int>>& pairs,
                                           CalibrationCache* cache, const std::string& cache_path) {
  struct Landing {
    int32_t ready;
    uint64_t bytes;
    cudaIpcMemHandle_t handle;
  };
  DeviceMemory landing;
  DeviceMemory source;
  Landing mine = {};
  // As large as the device allows, down to 1 MiB.
  for (uint64_t bytes = kCalibrationBytes; device_ >= 0 && bytes >= (uint64_t{1} << 20);
       bytes /= 2) {
    if (make_device_memory(bytes, &landing) == TCA_SUCCESS &&
        make_device_memory(bytes, &source) == TCA_SUCCESS &&
        fill_random(source.get(), bytes) == TCA_SUCCESS &&
        cudaIpcGetMemHandle(&mine.handle, landing.get()) == cudaSuccess) {
      mine.ready = 1;
      mine.bytes = bytes;
      break;
    }
    landing.reset();
    source.reset();
    cudaGetLastError();
    clear_last_error();
  }
  if (device_ >= 0 && !mine.ready) TCA_WARN("no calibration buffers on GPU {}", device_);
  std::vector<Landing> landings(job_.size());
  TCA_CHECK(job_.bootstrap().allgather(&mine, landings.data(), sizeof(Landing)));

  const int me = job_.rank();
  std::vector<PairCalibration> measured;
  for (const auto& [a, b] : pairs) {
    const bool involved = me == a || me == b;
    const int peer = me == a ? b : a;
    IpcMapping mapping;
    void* target = landing.get();
    int32_t ready = involved && landings[a].ready && landings[b].ready;
    if (ready && peer != me) {
      if (cudaIpcOpenMemHandle(&target, landings[peer].handle, cudaIpcMemLazyEnablePeerAccess) ==
          cudaSuccess) {
        mapping = IpcMapping(target);
      } else {
        TCA_WARN("calibration: cannot map rank {}'s landing buffer", peer);
        cudaGetLastError();
        ready = 0;
      }
    }
    // Both sides must be ready before either starts (the responder would wait for nothing).
    std::vector<int32_t> flags(job_.size());
    TCA_CHECK(job_.bootstrap().allgather(&ready, flags.data(), sizeof(int32_t)));
    int32_t ok = 0;
    PairCalibration pair;
    if (involved && flags[a] && flags[b]) {
      PingPongSide side;
      side.dst = static_cast<unsigned char*>(target);
      side.src = static_cast<const unsigned char*>(source.get());
      side.largest = std::min(landings[a].bytes, landings[b].bytes);
      side.notify = {reinterpret_cast<uint64_t*>(device_address_of_counter(
                         job_.notify_sent_counter(peer, kCalibrationSlot))),
                     reinterpret_cast<uint64_t*>(peers_[peer].control_device +
                                                 notify_cell_offset(me, kCalibrationSlot))};
      side.next_value = [this, peer] { return job_.next_notify_value(peer, kCalibrationSlot); };
      side.wait_for_peer = [this, peer] {
        return job_.wait_notification(peer, kCalibrationSlot, nullptr);
      };
      side.initiator = me == a;
      side.alone = a == b;
      if (measure_pingpong(side, limits_, dma_stream_.get(), &pair) == TCA_SUCCESS) {
        ok = 1;
      } else {
        TCA_WARN("calibrating GPU {} with rank {} failed: {}", device_, peer, last_error_message());
        cudaGetLastError();
        clear_last_error();
      }
    }
    TCA_CHECK(job_.bootstrap().allgather(&ok, flags.data(), sizeof(int32_t)));
    if (!flags[a] || !flags[b]) continue;
    MeasuredPair result = {};
    if (me == a) {
      std::snprintf(result.uuids[0], sizeof(result.uuids[0]), "%s", uuid_.c_str());
      std::snprintf(result.uuids[1], sizeof(result.uuids[1]), "%s", peers_[b].uuid.c_str());
      result.count = static_cast<uint32_t>(std::min<size_t>(pair.sizes.size(), 32));
      for (uint32_t i = 0; i < result.count; ++i) {
        result.sizes[i] = pair.sizes[i];
        result.ce_gbps[i] = pair.ce_gbps[i];
        result.sm_gbps[i] = pair.sm_gbps[i];
      }
    }
    TCA_CHECK(job_.bootstrap().broadcast(&result, sizeof(result), a));
    // A ping-pong is the same seen from either end: one result serves both directions.
    for (int direction = 0; direction < (a == b ? 1 : 2); ++direction) {
      PairCalibration entry;
      entry.src_uuid = result.uuids[direction];
      entry.dst_uuid = result.uuids[1 - direction];
      entry.sizes.assign(result.sizes, result.sizes + result.count);
      entry.ce_gbps.assign(result.ce_gbps, result.ce_gbps + result.count);
      entry.sm_gbps.assign(result.sm_gbps, result.sm_gbps + result.count);
      TCA_INFO("calibrated {} -> {}: copy engines from {} bytes", entry.src_uuid, entry.dst_uuid,
               entry.crossover());
      cache->put(entry);
      measured.push_back(std::move(entry));
    }
  }

  int first_here = 0;
  while (!job_.same_host(first_here)) ++first_here;
  if (me == first_here && !cache_path.empty() && !measured.empty()) {
    // What another job wrote meanwhile is kept.
    CalibrationCache file;
    file.load(cache_path);
    for (const PairCalibration& pair : measured) file.put(pair);
    if (file.save(cache_path) != TCA_SUCCESS) {
      TCA_WARN("calibration not cached: {}", last_error_message());
      clear_last_error();
    }
  }
  // Nobody frees its buffers while another rank may still be writing them.
  return job_.bootstrap().barrier();
}

}  // namespace tca
