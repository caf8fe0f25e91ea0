// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Traces of what tca does (TCA_TRACE=DIR): one text file per rank, DIR/rank-R.trace, a header
// line and one event a line, timestamps from the steady clock (docs/SIM.md: the format).
// Off by default; every hook is behind `trace::enabled()`, one load and one branch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tca/tca.h"

struct tcaDesc_st;

namespace tca {
class Context;
struct Transfer;

// Hooks defined beside the descriptors (core/desc.cc), where the transfers are known.
// Records a kick of `chain` (token `token`) that began at `begin`: every transfer with its ends,
// shape, memory kinds and the transport that carries it.
void trace_kick(Context& context, const tcaDesc_st& chain, uintptr_t token, uint64_t begin,
                uint64_t end);
// run_immediate (tcaPut, tcaGet), recorded as `what` when tracing.
tcaResult run_traced(Context& context, Transfer transfer, const char* what);
}  // namespace tca

namespace tca::trace {

extern bool g_enabled;
inline bool enabled() { return __builtin_expect(g_enabled, false); }

// Nanoseconds of the steady clock.
uint64_t now_ns();

// Starts this rank's trace when TCA_TRACE names a folder (created if missing). Fails, with a
// message naming the file, when the trace cannot be written.
tcaResult open(int rank, int world, uint64_t host_hash);
// Writes what is buffered and closes the file (tcaFinalize). Safe when tracing is off.
void close();

// One transfer as the trace records it.
struct TransferRecord {
  int src_rank = 0;
  int dst_rank = 0;
  uint64_t width = 0;
  uint64_t count = 1;
  uint64_t src_pitch = 0;
  uint64_t dst_pitch = 0;
  tcaMemKind src_kind = TCA_MEM_CPU;
  tcaMemKind dst_kind = TCA_MEM_CPU;
  const char* path = "";  // transport name
  int notify_slot = -1;   // -1: no notification
};

// The events; `begin` is now_ns() at the call's start, the end is taken inside (a kick's is
// given: the records of its transfers are made after the call, outside its time).
void kick(uint64_t begin, uint64_t end, uint64_t chain, int channel,
          const std::vector<TransferRecord>& chain_transfers);
void put_or_get(uint64_t begin, const char* what, const TransferRecord& transfer);
void notify(uint64_t begin, int dst_rank, int slot, const char* path);
// A failed test starts a wait that a later successful test or wait of (peer, slot) ends.
void test_missed(int peer, int slot);
void wait(uint64_t begin, int peer, int slot, int from);
void drain(uint64_t begin, int channel);
void pio(int owner, uint64_t offset, uint64_t bytes, tcaMemKind kind, const char* path);
void fence(uint64_t begin);
void barrier(uint64_t begin);
void phase(bool begin, const char* name);
// `memory` is where the buffers live; `steps` who runs the steps: "host" (the kicks,
// notifications and waits that follow are the steps), "device" (a GPU program the trace does not
// see) or "none" (nothing to move).
void collective_begin(const char* kind, const char* algorithm, uint64_t bytes, int ranks,
                      tcaMemKind memory, const char* steps);
// A GPU program's host-called iteration (steps "device"), recorded once the host started it, at
// `begin` (now_ns() before the start): its protocol ("ll": the inline one, or "simple"), its
// channels (blocks) and how the host started it (`call`: "resident", the running resident
// kernel's doorbell; "resident_start", the resident kernel launched for it; "launch", a launch).
void device_collective_begin(uint64_t begin, const char* kind, const char* algorithm,
                             uint64_t bytes, int ranks, const char* protocol, int channels,
                             const char* call);
void collective_end();
// A GPU program's stream-ordered iteration (tcaCollStartStream), timed on the GPU: `begin` and
// `end` on the steady clock, written when known, after lines with later times; both lines carry
// timed=gpu (call=stream) and readers put them in place.
void stream_collective(uint64_t begin, uint64_t end, const char* kind, const char* algorithm,
                       uint64_t bytes, int ranks, const char* protocol, int channels);
// Runs `hook` in close() before the last line is written (once however often it is added):
// what is still to be written, such as GPU-timed iterations, is written then.
void on_close(void (*hook)());

const char* kind_name(tcaMemKind kind);

}  // namespace tca::trace
