// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "trace_reader.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "base/trace_format.h"
#include "collective_steps.h"

namespace tca_sim {
namespace {

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  throw Error(file + ":" + std::to_string(line) + ": " + message);
}

uint64_t to_u64(const std::string& text, const std::string& file, int line,
                const std::string& what) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 19)
    fail(file, line, what + " '" + text + "' is not a non-negative integer");
  return std::stoull(text);
}

long to_int(const std::string& text, const std::string& file, int line, const std::string& what) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  const uint64_t value = to_u64(digits, file, line, what);
  if (value > 1u << 30) fail(file, line, what + " '" + text + "' is out of range");
  return negative ? -static_cast<long>(value) : static_cast<long>(value);
}

std::map<std::string, std::string> key_values(std::istringstream& in, const std::string& file,
                                              int line) {
  std::map<std::string, std::string> out;
  std::string token;
  while (in >> token) {
    const size_t eq = token.find('=');
    if (eq == std::string::npos || eq == 0)
      fail(file, line, "expected key=value, got '" + token + "'");
    out[token.substr(0, eq)] = token.substr(eq + 1);
  }
  return out;
}

const std::string& need(const TraceEvent& e, const std::string& key, const std::string& file) {
  const auto found = e.fields.find(key);
  if (found == e.fields.end()) fail(file, e.line, e.kind + " without " + key + "=");
  return found->second;
}

namespace words = tca::trace_format;  // spelled as the writer spells them

}  // namespace

// Puts the GPU-timed pairs (coll_begin, coll_end) into the host's events by time: each pair
// whole before the first host event after its begin (a kick and its xfer lines share a time, so
// no kick is split). One line of time per rank cannot hold a host call while the GPU runs a
// collective: host events inside a pair's span come after it, and a pair that begins inside an
// earlier one's after that; each such event counts in `moved`.
void merge_gpu_timed(std::vector<TraceEvent>& events, std::vector<TraceEvent>& gpu_timed,
                     long* moved) {
  if (gpu_timed.empty()) return;
  std::vector<size_t> begins;  // of the pairs, by begin time
  for (size_t i = 0; i + 1 < gpu_timed.size(); i += 2) begins.push_back(i);
  std::stable_sort(begins.begin(), begins.end(),
                   [&](size_t a, size_t b) { return gpu_timed[a].t < gpu_timed[b].t; });
  std::vector<TraceEvent> merged;
  merged.reserve(events.size() + gpu_timed.size());
  size_t h = 0;
  uint64_t last_end = 0;
  for (const size_t b : begins) {
    const TraceEvent& begin = gpu_timed[b];
    while (h < events.size() && events[h].t <= begin.t && events[h].kind != words::kEnd) {
      if (events[h].t < last_end && events[h].kind != words::kXfer) ++*moved;
      merged.push_back(std::move(events[h++]));
    }
    if (begin.t < last_end) ++*moved;
    merged.push_back(begin);
    merged.push_back(gpu_timed[b + 1]);
    last_end = std::max(last_end, gpu_timed[b + 1].t);
  }
  while (h < events.size()) {
    if (events[h].t < last_end && events[h].kind != words::kXfer) ++*moved;
    merged.push_back(std::move(events[h++]));
  }
  events = std::move(merged);
}

RankTrace parse_rank_trace(const std::string& text, const std::string& file) {
  RankTrace trace;
  trace.file = file;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  if (!std::getline(in, raw)) fail(file, 1, "empty trace (no header line)");
  ++line;
  {
    std::istringstream head(raw);
    std::string magic, version;
    head >> magic >> version;
    if (magic != words::kMagic)
      fail(file, line,
           std::string("not a tca trace (header must start with '") + words::kMagic + "')");
    if (version != "1") fail(file, line, "trace format version '" + version + "' is not 1");
    const auto fields = key_values(head, file, line);
    for (const char* key : {"rank", "world", "host", "clock", "start"})
      if (fields.count(key) == 0) fail(file, line, std::string("header without ") + key + "=");
    if (fields.at("clock") != words::kClock)
      fail(file, line, "clock '" + fields.at("clock") + "' is not " + words::kClock);
    trace.rank = static_cast<int>(to_int(fields.at("rank"), file, line, "rank"));
    trace.world = static_cast<int>(to_int(fields.at("world"), file, line, "world"));
    if (trace.world < 1 || trace.rank < 0 || trace.rank >= trace.world)
      fail(file, line, "rank " + fields.at("rank") + " outside world " + fields.at("world"));
    trace.host = fields.at("host");
    trace.start = to_u64(fields.at("start"), file, line, "start");
  }
  size_t expect_xfers = 0;
  bool ended = false;
  std::vector<TraceEvent> gpu_timed;  // lines with timed=gpu, in pairs
  while (std::getline(in, raw)) {
    ++line;
    if (raw.empty()) continue;
    if (ended) fail(file, line, "event after 'end'");
    std::istringstream fields(raw);
    std::string t;
    TraceEvent e;
    e.line = line;
    if (!(fields >> t >> e.kind)) fail(file, line, "expected '<time> <event> key=value...'");
    e.t = to_u64(t, file, line, "time");
    if (std::find(std::begin(words::kEvents), std::end(words::kEvents), e.kind) ==
        std::end(words::kEvents))
      fail(file, line, "unknown event '" + e.kind + "'");
    e.fields = key_values(fields, file, line);
    if (e.fields.count("dur")) e.dur = to_u64(e.fields["dur"], file, line, "dur");
    if (e.kind == words::kXfer) {
      if (expect_xfers == 0) fail(file, line, "xfer without a kick before it");
      --expect_xfers;
    } else if (expect_xfers != 0) {
      fail(file, line, "kick announced " + std::to_string(expect_xfers) + " more xfer lines");
    }
    if (e.kind == words::kKick) expect_xfers = to_u64(need(e, "n", file), file, line, "n");
    const auto timed = e.fields.find(words::kTimedKey);
    if (timed != e.fields.end()) {  // written after the fact: put in place below
      if (timed->second != words::kTimedGpu)
        fail(file, line, "timed='" + timed->second + "' is not " + words::kTimedGpu);
      if (e.kind != words::kCollBegin && e.kind != words::kCollEnd)
        fail(file, line, "only coll_begin and coll_end are timed on the GPU");
      if (e.kind == words::kCollEnd &&
          (gpu_timed.empty() || gpu_timed.back().kind != words::kCollBegin))
        fail(file, line, "a GPU-timed coll_end without its coll_begin before it");
      if (e.kind == words::kCollBegin && !gpu_timed.empty() &&
          gpu_timed.back().kind == words::kCollBegin)
        fail(file, line, "a GPU-timed coll_begin before the last one's coll_end");
      if (e.kind == words::kCollEnd && e.t < gpu_timed.back().t)
        fail(file, line, "a GPU-timed coll_end before its coll_begin");
      gpu_timed.push_back(std::move(e));
      continue;
    }
    if (!trace.events.empty() && e.t < trace.events.back().t && e.kind != words::kXfer)
      fail(file, line, "time goes backwards");
    if (e.kind == words::kEnd) ended = true;
    trace.events.push_back(std::move(e));
  }
  if (expect_xfers != 0) fail(file, line, "the file ends inside a kick's xfer lines");
  if (!ended) fail(file, line, "the trace has no 'end' line (was tcaFinalize called?)");
  if (!gpu_timed.empty() && gpu_timed.back().kind != words::kCollEnd)
    fail(file, gpu_timed.back().line, "a GPU-timed coll_begin without its coll_end");
  merge_gpu_timed(trace.events, gpu_timed, &trace.gpu_overlaps);
  return trace;
}

std::vector<RankTrace> read_trace_dir(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) throw Error(dir + ": cannot open the trace folder");
  std::vector<std::string> files;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.rfind("rank-", 0) == 0 && name.size() > 11 && name.substr(name.size() - 6) == ".trace")
      files.push_back(dir + "/" + name);
  }
  closedir(d);
  if (files.empty()) throw Error(dir + ": no rank-R.trace files");
  std::vector<RankTrace> traces;
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    traces.push_back(parse_rank_trace(text.str(), file));
  }
  std::sort(traces.begin(), traces.end(),
            [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  const int world = traces.front().world;
  for (size_t i = 0; i < traces.size(); ++i) {
    if (traces[i].world != world)
      throw Error(traces[i].file + ":1: world differs from the other ranks'");
    if (traces[i].rank != static_cast<int>(i))
      throw Error(dir + ": rank " + std::to_string(i) + "'s trace is missing or duplicated");
  }
  if (static_cast<int>(traces.size()) != world)
    throw Error(dir + ": " + std::to_string(traces.size()) + " traces for a world of " +
                std::to_string(world));
  return traces;
}

namespace {

Message message_of(const TraceEvent& e, int me, const std::string& file) {
  Message m;
  const int src = static_cast<int>(to_int(need(e, "src", file), file, e.line, "src"));
  const int dst = static_cast<int>(to_int(need(e, "dst", file), file, e.line, "dst"));
  m.src_rank = src == me ? -1 : src;
  m.dst_rank = dst;
  m.bytes = static_cast<double>(to_u64(need(e, "width", file), file, e.line, "width")) *
            static_cast<double>(to_u64(need(e, "count", file), file, e.line, "count"));
  try {
    m.src_kind = parse_mem_kind(need(e, "skind", file));
    m.dst_kind = parse_mem_kind(need(e, "dkind", file));
  } catch (const Error& error) {
    if (std::string(error.what()).rfind(file, 0) == 0) throw;
    fail(file, e.line, error.what());
  }
  const auto path = e.fields.find("path");
  if (path != e.fields.end()) m.path = path->second;
  const auto notify = e.fields.find("notify");
  m.notify_slot = notify == e.fields.end()
                      ? -1
                      : static_cast<int>(to_int(notify->second, file, e.line, "notify"));
  return m;
}

// The shape of a kick for segments: its first transfer's path, memory kinds and bytes.
std::string kick_shape(const std::vector<Message>& messages, const TraceEvent& first) {
  if (messages.empty()) return "empty";
  const Message& m = messages.front();
  const auto path = first.fields.find("path");
  return (path == first.fields.end() ? std::string("?") : path->second) + "." +
         mem_kind_name(m.src_kind) + ">" + mem_kind_name(m.dst_kind) + "." +
         std::to_string(static_cast<long long>(m.bytes));
}

// Who ran a collective's steps: "host" (older traces: the field is missing), "device", "none".
std::string steps_of(const TraceEvent& e, const std::string& file) {
  const auto steps = e.fields.find("steps");
  if (steps == e.fields.end()) return "host";
  if (steps->second != "host" && steps->second != "device" && steps->second != "none")
    fail(file, e.line, "steps='" + steps->second + "' is not host, device or none");
  return steps->second;
}

// What a GPU program's iteration records beyond the collective (traces before these fields
// have none of them): its protocol, channels and how the host started it.
struct DeviceIteration {
  bool inline_protocol = false;
  int channels = 0;  // 0: not recorded
  std::string call;  // "": not recorded
};

DeviceIteration device_iteration(const TraceEvent& e, const std::string& file) {
  DeviceIteration out;
  const auto protocol = e.fields.find("protocol");
  if (protocol != e.fields.end()) {
    if (protocol->second != "ll" && protocol->second != "simple")
      fail(file, e.line, "protocol='" + protocol->second + "' is not ll or simple");
    out.inline_protocol = protocol->second == "ll";
  }
  const auto channels = e.fields.find("channels");
  if (channels != e.fields.end()) {
    out.channels = static_cast<int>(to_int(channels->second, file, e.line, "channels"));
    if (out.channels < 1) fail(file, e.line, "channels=" + channels->second + " is not >= 1");
  }
  const auto call = e.fields.find("call");
  if (call != e.fields.end()) {
    if (call->second != "resident" && call->second != "resident_start" &&
        call->second != "launch" && call->second != "stream")
      fail(file, e.line,
           "call='" + call->second + "' is not resident, resident_start, launch or stream");
    out.call = call->second;
  }
  return out;
}

// A collective a GPU program ran: the host-called iteration's own cost (the fabric's, by the
// call's form), then the library's steps for this rank (collective_steps.h), each step number
// opened by the program's own work in it, each send a kick of one message on the path
// "cuda.device" raising a slot of its own, and last the program's work beyond its steps (its
// pieces placed, its local reduction: the fabric's, by collective and algorithm). Returns that
// work's name.
std::string append_device_steps(const TraceEvent& e, int rank, int world, const std::string& file,
                                Program& program) {
  const DeviceIteration iteration = device_iteration(e, file);
  const int ranks = static_cast<int>(to_int(need(e, "ranks", file), file, e.line, "ranks"));
  if (ranks != world)
    fail(file, e.line,
         "a collective of " + std::to_string(ranks) + " ranks in a world of " +
             std::to_string(world) + ": only collectives of every rank can be replayed");
  MemKind kind = MemKind::kGpu;
  const auto memory = e.fields.find("memory");
  std::vector<CollectiveStep> steps;
  try {
    if (memory != e.fields.end()) kind = parse_mem_kind(memory->second);
    const double bytes = static_cast<double>(to_u64(need(e, "bytes", file), file, e.line, "bytes"));
    steps = collective_steps(need(e, "op", file), need(e, "algorithm", file), bytes, ranks, rank);
  } catch (const Error& error) {
    if (std::string(error.what()).rfind(file, 0) == 0) throw;
    fail(file, e.line, error.what());
  }
  Step call;
  call.kind = Step::kDeviceCall;
  call.name = iteration.call;
  program.push_back(call);
  int last_step = -1;
  for (const CollectiveStep& c : steps) {
    if (c.step != last_step) {
      Step work;
      work.kind = Step::kDeviceStep;
      program.push_back(work);
      last_step = c.step;
    }
    Step s;
    s.peer = c.peer;
    s.slot = kDeviceCollectiveSlots + c.step;
    if (c.send) {
      s.kind = Step::kKick;
      Message m;
      m.dst_rank = c.peer;
      m.bytes = c.bytes;
      m.src_kind = m.dst_kind = kind;
      m.notify_slot = s.slot;
      m.path = "cuda.device";
      m.channels = iteration.channels;
      m.inline_protocol = iteration.inline_protocol;
      s.messages.push_back(m);
    } else {
      s.kind = Step::kWait;
    }
    program.push_back(s);
  }
  Step work;
  work.kind = Step::kDeviceWork;
  work.name = need(e, "op", file) + "_" + need(e, "algorithm", file);
  program.push_back(work);
  return work.name;
}

}  // namespace

TraceJob job_from_traces(const std::vector<RankTrace>& traces, bool segments) {
  TraceJob out;
  const int world = static_cast<int>(traces.size());
  out.job.ranks.resize(world);
  out.common_clock = std::all_of(traces.begin(), traces.end(),
                                 [&](const RankTrace& t) { return t.host == traces.front().host; });
  // Each rank's origin: its first event (on one host, the earliest first event of all ranks).
  uint64_t origin = std::numeric_limits<uint64_t>::max();
  for (const RankTrace& t : traces)
    if (!t.events.empty()) origin = std::min(origin, t.start + t.events.front().t);
  // Segments: the shape of the transfer behind every notification, in the order each sender
  // raised them per (source, destination, slot), so a wait belongs to the row that notified it.
  std::map<std::tuple<int, int, int>, std::vector<std::string>> raised;
  std::map<std::tuple<int, int, int>, size_t> matched;
  for (int r = 0; segments && r < world; ++r) {
    const auto& events = traces[r].events;
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].kind == words::kNotify) {
        const int dst = static_cast<int>(
            to_int(need(events[i], "dst", traces[r].file), traces[r].file, events[i].line, "dst"));
        const int slot = static_cast<int>(to_int(need(events[i], "slot", traces[r].file),
                                                 traces[r].file, events[i].line, "slot"));
        raised[{r, dst, slot}].push_back("");
      }
      if (events[i].kind != words::kKick) continue;
      std::vector<Message> chain;
      for (size_t j = i + 1; j < events.size() && events[j].kind == words::kXfer; ++j)
        chain.push_back(message_of(events[j], r, traces[r].file));
      const std::string shape =
          kick_shape(chain, i + 1 < events.size() ? events[i + 1] : events[i]);
      for (const Message& m : chain)
        if (m.notify_slot >= 0) raised[{r, m.dst_rank, m.notify_slot}].push_back(shape);
    }
  }
  for (int r = 0; r < world; ++r) {
    const RankTrace& trace = traces[r];
    out.gpu_overlaps += trace.gpu_overlaps;
    Program& program = out.job.ranks[r];
    if (trace.events.empty()) continue;
    uint64_t cursor = out.common_clock ? origin - trace.start : trace.events.front().t;
    std::map<std::string, std::vector<uint64_t>> open;
    std::map<std::string, double> rank_phase;
    std::vector<std::string> coll_stack;
    // The open segment: its name, where its phase end goes and the times it spans.
    std::string segment;
    size_t segment_end_step = 0;
    uint64_t segment_begin = 0, segment_end = 0;
    auto close_segment = [&] {
      if (segment.empty()) return;
      Step end;
      end.kind = Step::kPhaseEnd;
      end.name = segment;
      program.insert(program.begin() + static_cast<std::ptrdiff_t>(segment_end_step), end);
      const double seconds = static_cast<double>(segment_end - segment_begin) * 1e-9;
      PhaseTotal& total = out.measured_phases[segment];
      total.seconds += seconds;
      ++total.count;
      rank_phase[segment] += seconds;
      segment.clear();
    };
    auto gap_to = [&](uint64_t t) {
      if (t > cursor) {
        Step s;
        s.kind = Step::kCompute;
        s.seconds = static_cast<double>(t - cursor) * 1e-9;
        program.push_back(s);
        cursor = t;
      }
    };
    const auto& events = trace.events;
    bool device_collective = false;  // inside a collective whose steps a GPU program ran
    for (size_t i = 0; i < events.size(); ++i) {
      const TraceEvent& e = events[i];
      if (e.kind == words::kXfer) continue;                  // taken with their kick
      if (e.kind == words::kCollEnd && device_collective) {  // its time is the modelled steps'
        cursor = std::max(cursor, e.t);
        device_collective = false;
      }
      gap_to(e.t);
      Step s;
      bool emit = true;
      if (e.kind == words::kKick) {
        s.kind = Step::kKick;
        for (size_t j = i + 1; j < events.size() && events[j].kind == words::kXfer; ++j)
          s.messages.push_back(message_of(events[j], r, trace.file));
        out.transfers += static_cast<long>(s.messages.size());
        ++out.kicks;
        const std::string shape =
            segments ? kick_shape(s.messages, i + 1 < events.size() ? events[i + 1] : e)
                     : std::string();
        if (segments && shape != segment) {
          close_segment();
          Step begin;
          begin.kind = Step::kPhaseBegin;
          begin.name = segment = shape;
          program.push_back(begin);
          segment_begin = e.t;
        }
      } else if (e.kind == words::kPut || e.kind == words::kGet) {
        s.kind = Step::kPut;
        s.messages.push_back(message_of(e, r, trace.file));
        ++out.transfers;
      } else if (e.kind == words::kNotify) {
        s.kind = Step::kNotify;
        s.peer = static_cast<int>(to_int(need(e, "dst", trace.file), trace.file, e.line, "dst"));
        s.slot = static_cast<int>(to_int(need(e, "slot", trace.file), trace.file, e.line, "slot"));
      } else if (e.kind == words::kWait) {
        s.kind = Step::kWait;
        s.peer = static_cast<int>(to_int(need(e, "from", trace.file), trace.file, e.line, "from"));
        s.slot = static_cast<int>(to_int(need(e, "slot", trace.file), trace.file, e.line, "slot"));
        ++out.waits;
      } else if (e.kind == words::kDrain) {
        s.kind = Step::kDrain;
      } else if (e.kind == words::kBarrier) {
        s.kind = Step::kBarrier;
      } else if (e.kind == words::kPhaseBegin || e.kind == words::kPhaseEnd ||
                 e.kind == words::kCollBegin || e.kind == words::kCollEnd) {
        const bool begin = e.kind == words::kPhaseBegin || e.kind == words::kCollBegin;
        std::string name;
        if (e.kind.rfind("coll", 0) == 0) {
          if (begin) coll_stack.push_back("coll." + need(e, "op", trace.file));
          if (coll_stack.empty()) fail(trace.file, e.line, "coll_end without coll_begin");
          name = coll_stack.back();
          if (!begin) coll_stack.pop_back();
        } else {
          name = need(e, "name", trace.file);
        }
        s.kind = begin ? Step::kPhaseBegin : Step::kPhaseEnd;
        s.name = name;
        if (begin) {
          open[name].push_back(e.t);
        } else if (!open[name].empty()) {
          PhaseTotal& total = out.measured_phases[name];
          total.seconds += static_cast<double>(e.t - open[name].back()) * 1e-9;
          rank_phase[name] += static_cast<double>(e.t - open[name].back()) * 1e-9;
          ++total.count;
          open[name].pop_back();
        }
      } else if (e.kind == words::kEnd) {
        emit = false;
        const double end = static_cast<double>(
                               trace.start + e.t -
                               (out.common_clock ? origin : trace.start + trace.events.front().t)) *
                           1e-9;
        out.measured = std::max(out.measured, end);
      } else {
        emit = false;  // pio, fence: their time stays in the gaps (stores are invisible)
      }
      if (!emit) continue;
      program.push_back(s);
      if (e.kind == words::kCollBegin &&
          steps_of(e, trace.file) == "device") {  // inside the collective's phase
        out.device_programs.insert(append_device_steps(e, r, world, trace.file, program));
        ++out.device_collectives;
        if (e.fields.count("call") == 0) ++out.device_unlabelled;
        if (e.fields.count(words::kTimedKey) != 0) ++out.gpu_timed;
        device_collective = true;
      }
      // The call's own duration is the model's to predict (kick cost, wait, drain, barrier).
      cursor = std::max(cursor, e.t + e.dur);
      bool in_segment = !segment.empty();
      if (in_segment &&
          s.kind == Step::kWait) {  // a wait for the next row's first transfer is not this row's
        const std::tuple<int, int, int> key{s.peer, r, s.slot};
        const auto& shapes = raised[key];
        const size_t n = matched[key]++;
        in_segment = n < shapes.size() && shapes[n] == segment;
      } else if (segments && s.kind == Step::kWait) {
        ++matched[{s.peer, r, s.slot}];
      }
      if (in_segment) {
        segment_end_step = program.size();
        segment_end = e.t + e.dur;
      }
    }
    close_segment();
    for (const auto& [name, seconds] : rank_phase)
      out.measured_phases[name].max_seconds =
          std::max(out.measured_phases[name].max_seconds, seconds);
  }
  return out;
}

}  // namespace tca_sim
