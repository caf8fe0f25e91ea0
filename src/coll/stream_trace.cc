// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll/stream_trace.h"

#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "base/log.h"
#include "base/trace.h"
#include "coll/device_engine.h"

namespace tca::coll {
namespace {

// A device's reference: an event that completed at `host_ns` on the steady clock (the middle
// of the host's wait for it, which bounds the error by half that wait).
struct Reference {
  cudaEvent_t event = nullptr;
  uint64_t host_ns = 0;
};

// A new reference after this long: CUDA gives event times apart as a float of milliseconds,
// whose resolution coarsens with the distance (0.06 us at 1 s).
constexpr uint64_t kReferenceNs = 1000000000;

// One timed iteration waiting for its events.
struct Pending {
  Reference reference;
  cudaEvent_t begin = nullptr;
  cudaEvent_t end = nullptr;
  tcaColl_st::DeviceTraceFields fields{};
};

struct State {
  std::mutex mutex;
  std::deque<Pending> pending;              // in enqueue order
  std::vector<cudaEvent_t> free_events;     // completed ones, reused
  std::map<int, Reference> references;      // the latest, by device
  std::vector<cudaEvent_t> old_references;  // destroyed at tcaFinalize (pending ones use them)
  bool hooked = false;
};

State& state() {
  static State* instance = new State();  // outlives the static destructors that may trace
  return *instance;
}

cudaEvent_t take_event(State& s) {
  if (!s.free_events.empty()) {
    cudaEvent_t event = s.free_events.back();
    s.free_events.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  if (cudaEventCreate(&event) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return event;
}

// The device's reference, recorded on a stream of its own the first time and again once it is
// kReferenceNs old.
const Reference* reference(State& s, int device) {
  const auto known = s.references.find(device);
  if (known != s.references.end()) {
    if (trace::now_ns() - known->second.host_ns < kReferenceNs) return &known->second;
    s.old_references.push_back(known->second.event);
    s.references.erase(known);
  }
  cudaStream_t stream = nullptr;
  Reference r;
  r.event = take_event(s);
  bool ok = r.event != nullptr &&
            cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess;
  const uint64_t before = trace::now_ns();
  ok = ok && cudaEventRecord(r.event, stream) == cudaSuccess &&
       cudaEventSynchronize(r.event) == cudaSuccess;
  const uint64_t after = trace::now_ns();
  if (stream != nullptr) cudaStreamDestroy(stream);
  if (!ok) {
    cudaGetLastError();
    if (r.event != nullptr) cudaEventDestroy(r.event);
    return nullptr;
  }
  r.host_ns = before + (after - before) / 2;
  return &s.references.emplace(device, r).first->second;
}

// Nanoseconds from event `from` to event `to` (both completed); false where CUDA cannot tell.
bool between(cudaEvent_t from, cudaEvent_t to, double* ns) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, from, to) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  *ns = static_cast<double>(ms) * 1e6;
  return true;
}

// The iteration's span on the steady clock: its start through the reference, its length from
// its own two events (the finer figure).
bool host_span(const Pending& p, uint64_t* begin, uint64_t* end) {
  double offset = 0, length = 0;
  if (!between(p.reference.event, p.begin, &offset) || !between(p.begin, p.end, &length))
    return false;
  *begin = offset >= 0 ? p.reference.host_ns + static_cast<uint64_t>(offset)
                       : p.reference.host_ns - static_cast<uint64_t>(-offset);
  *end = *begin + static_cast<uint64_t>(length > 0 ? length : 0);
  return true;
}

// Writes the completed iterations at the queue's head, in order; with `all`, also drops the
// ones still running (counted). Called with the lock held.
void write_completed(State& s, bool all) {
  size_t dropped = 0;
  while (!s.pending.empty()) {
    Pending& p = s.pending.front();
    const cudaError_t done = cudaEventQuery(p.end);
    if (done == cudaErrorNotReady && !all) break;
    uint64_t begin = 0, end = 0;
    if (done == cudaSuccess && host_span(p, &begin, &end)) {
      const tcaColl_st::DeviceTraceFields& f = p.fields;
      trace::stream_collective(begin, end, f.op, f.algorithm, f.bytes, f.ranks, f.protocol,
                               f.channels);
    } else {
      cudaGetLastError();
      ++dropped;
    }
    if (done != cudaErrorNotReady) {  // a running one's events stay theirs
      s.free_events.push_back(p.begin);
      s.free_events.push_back(p.end);
    }
    s.pending.pop_front();
  }
  if (dropped != 0)
    TCA_WARN(
        "trace: {} stream-ordered collective iteration(s) not timed (still running at "
        "tcaFinalize, or CUDA could not time them)",
        dropped);
}

// At tcaFinalize: what has completed is written, the rest dropped; the events are freed.
void close_hook() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  write_completed(s, true);
  for (cudaEvent_t event : s.free_events) cudaEventDestroy(event);
  s.free_events.clear();
  for (auto& [device, r] : s.references) cudaEventDestroy(r.event);
  s.references.clear();
  for (cudaEvent_t event : s.old_references) cudaEventDestroy(event);
  s.old_references.clear();
  cudaGetLastError();
}

}  // namespace

tcaResult enqueue_traced(tcaColl_st& coll, cudaStream_t stream) {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.hooked) {
    trace::on_close(close_hook);
    s.hooked = true;
  }
  write_completed(s, false);
  int device = 0;
  Pending p;
  const Reference* r = cudaGetDevice(&device) == cudaSuccess ? reference(s, device) : nullptr;
  if (r != nullptr) {
    p.reference = *r;  // a copy: the map may move on while the lock is let go below
    p.begin = take_event(s);
    p.end = take_event(s);
  }
  const bool timed =
      p.begin != nullptr && p.end != nullptr && cudaEventRecord(p.begin, stream) == cudaSuccess;
  lock.unlock();  // the launch itself outside the lock
  const tcaResult enqueued = coll.device()->enqueue(stream);
  lock.lock();
  if (enqueued == TCA_SUCCESS && timed && cudaEventRecord(p.end, stream) == cudaSuccess) {
    p.fields = coll.device_trace_fields();
    s.pending.push_back(p);
    return TCA_SUCCESS;
  }
  if (enqueued == TCA_SUCCESS) cudaGetLastError();  // the timing's own failure, not the call's
  for (cudaEvent_t event : {p.begin, p.end})
    if (event != nullptr) s.free_events.push_back(event);
  return enqueued;
}

}  // namespace tca::coll
