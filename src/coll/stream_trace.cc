// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll/stream_trace.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "base/log.h"
#include "base/trace.h"
#include "coll/device_engine.h"
#include "coll/device_kernel.h"

namespace tca::coll {
namespace {

// A device's reference (ClockReference): host_ns is the middle of the host's wait for the
// timer's read, the shortest of a few waits.
using Reference = ClockReference;

// A new reference after this long (the two clocks may drift apart).
constexpr uint64_t kReferenceNs = 1000000000;
constexpr int kReferenceTries = 3;

// Completions are looked for once this many iterations wait (and at tcaFinalize).
constexpr size_t kWriteBatch = 64;

// Stamp areas (2 words per channel, Program::stamps) come in host-mapped chunks of this many.
constexpr size_t kAreasPerChunk = 128;

// One timed iteration waiting for its blocks' stamps.
struct Pending {
  Reference reference;
  uint64_t* stamps = nullptr;  // host-mapped: the host's view; the GPU's pointer is the same
  int channels = 0;
  tcaColl_st::DeviceTraceFields fields{};
};

struct State {
  std::mutex mutex;
  std::deque<Pending> pending;                       // in enqueue order
  std::map<int, std::vector<uint64_t*>> free_areas;  // by channel count
  std::vector<void*> chunks;                         // cudaFreeHost at tcaFinalize
  std::map<int, Reference> references;               // the latest, by device
  uint64_t* clock_cell = nullptr;                    // host-mapped, for the references
  bool hooked = false;
};

State& state() {
  static State* instance = new State();  // outlives the static destructors that may trace
  return *instance;
}

void* host_mapped(size_t bytes) {
  void* block = nullptr;
  if (cudaHostAlloc(&block, bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return block;
}

// A zeroed stamp area for `channels` blocks (a new chunk where none is free), or nullptr.
uint64_t* take_area(State& s, int channels) {
  std::vector<uint64_t*>& free = s.free_areas[channels];
  if (free.empty()) {
    const size_t words = 2 * static_cast<size_t>(channels);
    auto* chunk = static_cast<uint64_t*>(host_mapped(kAreasPerChunk * words * sizeof(uint64_t)));
    if (chunk == nullptr) return nullptr;
    s.chunks.push_back(chunk);
    for (size_t a = 0; a < kAreasPerChunk; ++a) free.push_back(chunk + a * words);
  }
  uint64_t* area = free.back();
  free.pop_back();
  std::fill(area, area + 2 * static_cast<size_t>(channels), uint64_t{0});
  return area;
}

// A word the GPU stores into host-mapped memory.
uint64_t read_word(const uint64_t* word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }

// The device's reference, taken the first time and again once it is kReferenceNs old.
const Reference* reference(State& s, int device) {
  const auto known = s.references.find(device);
  if (known != s.references.end() && trace::now_ns() - known->second.host_ns < kReferenceNs)
    return &known->second;
  if (s.clock_cell == nullptr) s.clock_cell = static_cast<uint64_t*>(host_mapped(8));
  cudaStream_t stream = nullptr;
  if (s.clock_cell == nullptr ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  Reference best;
  uint64_t best_wait = UINT64_MAX;
  for (int i = 0; i < kReferenceTries; ++i) {
    const uint64_t before = trace::now_ns();
    if (launch_clock_read(s.clock_cell, stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess)
      break;
    const uint64_t after = trace::now_ns();
    if (after - before < best_wait) {
      best_wait = after - before;
      best.gpu_ns = read_word(s.clock_cell);
      best.host_ns = before + (after - before) / 2;
    }
  }
  cudaStreamDestroy(stream);
  cudaGetLastError();
  if (best_wait == UINT64_MAX) return nullptr;
  s.references[device] = best;
  return &s.references[device];
}

uint64_t to_host(const Reference& r, uint64_t gpu_ns) {
  return gpu_ns >= r.gpu_ns ? r.host_ns + (gpu_ns - r.gpu_ns) : r.host_ns - (r.gpu_ns - gpu_ns);
}

bool completed_span(const Pending& p, uint64_t* begin, uint64_t* end) {
  return stamped_span(p.stamps, p.channels, p.reference, begin, end);
}

// Writes the completed iterations at the queue's head, in order; with `all`, drops the ones
// still running (counted), whose stamp areas stay allocated (their blocks may yet write there).
// Called with the lock held.
void write_completed(State& s, bool all) {
  size_t dropped = 0;
  while (!s.pending.empty()) {
    Pending& p = s.pending.front();
    uint64_t begin = 0, end = 0;
    if (completed_span(p, &begin, &end)) {
      const tcaColl_st::DeviceTraceFields& f = p.fields;
      trace::stream_collective(begin, end, f.op, f.algorithm, f.bytes, f.ranks, f.protocol,
                               f.channels);
      s.free_areas[p.channels].push_back(p.stamps);
    } else if (all) {
      ++dropped;
    } else {
      break;
    }
    s.pending.pop_front();
  }
  if (dropped != 0)
    TCA_WARN(
        "trace: {} stream-ordered collective iteration(s) not timed (still running at "
        "tcaFinalize)",
        dropped);
}

// At tcaFinalize: what has completed is written, the rest dropped. The chunks are freed unless
// a dropped iteration may still write into one.
void close_hook() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const bool running = [&] {
    for (const Pending& p : s.pending) {
      uint64_t begin = 0, end = 0;
      if (!completed_span(p, &begin, &end)) return true;
    }
    return false;
  }();
  write_completed(s, true);
  if (!running) {
    for (void* chunk : s.chunks) cudaFreeHost(chunk);
    if (s.clock_cell != nullptr) cudaFreeHost(s.clock_cell);
    s.clock_cell = nullptr;
  }
  s.chunks.clear();
  s.free_areas.clear();
  s.references.clear();
  cudaGetLastError();
}

}  // namespace

bool stamped_span(const uint64_t* stamps, int channels, const ClockReference& reference,
                  uint64_t* begin, uint64_t* end) {
  uint64_t first = UINT64_MAX, last = 0;
  for (int c = 0; c < channels; ++c) {
    const uint64_t started = read_word(stamps + 2 * c);  // a block stores the pair at once
    const uint64_t ended = read_word(stamps + 2 * c + 1);
    if (started == 0 || ended == 0) return false;
    first = std::min(first, started);
    last = std::max(last, ended);
  }
  if (channels <= 0) return false;
  *begin = to_host(reference, first);
  *end = std::max(*begin, to_host(reference, last));
  return true;
}

tcaResult enqueue_traced(tcaColl_st& coll, cudaStream_t stream) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.hooked) {
    trace::on_close(close_hook);
    s.hooked = true;
  }
  if (s.pending.size() >= kWriteBatch) write_completed(s, false);
  int device = 0;
  Pending p;
  const Reference* r = cudaGetDevice(&device) == cudaSuccess ? reference(s, device) : nullptr;
  if (r != nullptr) {
    p.reference = *r;
    p.channels = coll.device()->channels();
    p.stamps = take_area(s, p.channels);
  }
  lock.unlock();  // the launch itself outside the lock
  const tcaResult enqueued = coll.device()->enqueue(stream, p.stamps);
  lock.lock();
  if (enqueued == TCA_SUCCESS && p.stamps != nullptr) {
    p.fields = coll.device_trace_fields();
    s.pending.push_back(p);
  } else if (p.stamps != nullptr) {
    s.free_areas[p.channels].push_back(p.stamps);
  }
  return enqueued;
}

}  // namespace tca::coll
