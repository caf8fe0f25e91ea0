// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The words of the trace format (docs/SIM.md): the header's magic word and clock, and the name
// of every event. The writer (base/trace.cc) and tca-sim's reader (sim/src/trace_reader.cc)
// both spell them from here; this header needs nothing else, so tca-sim includes it without
// linking libtca.
#pragma once

namespace tca::trace_format {

inline constexpr char kMagic[] = "tca-trace";  // the header line's first word
inline constexpr char kClock[] = "steady_ns";  // the header's clock= value

// Events, one per line: "<t> <event> key=value...".
inline constexpr char kKick[] = "kick";  // a chain kicked; its transfers follow as kXfer
inline constexpr char kXfer[] = "xfer";
inline constexpr char kPut[] = "put";
inline constexpr char kGet[] = "get";
inline constexpr char kNotify[] = "notify";
inline constexpr char kWait[] = "wait";
inline constexpr char kDrain[] = "drain";
inline constexpr char kPio[] = "pio";
inline constexpr char kFence[] = "fence";
inline constexpr char kBarrier[] = "barrier";
inline constexpr char kPhaseBegin[] = "phase_begin";
inline constexpr char kPhaseEnd[] = "phase_end";
inline constexpr char kCollBegin[] = "coll_begin";
inline constexpr char kCollEnd[] = "coll_end";
inline constexpr char kEnd[] = "end";  // the last line of a whole trace

// A field that lines written after the fact carry: their times were taken on the GPU and put
// on the steady clock, so they may come after lines with later times; readers put them in place.
inline constexpr char kTimedKey[] = "timed";
inline constexpr char kTimedGpu[] = "gpu";

// Every event, as a reader accepts them.
inline constexpr const char* kEvents[] = {kKick,       kXfer,     kPut,       kGet,     kNotify,
                                          kWait,       kDrain,    kPio,       kFence,   kBarrier,
                                          kPhaseBegin, kPhaseEnd, kCollBegin, kCollEnd, kEnd};

}  // namespace tca::trace_format
