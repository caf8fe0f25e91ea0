// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The trace writer: events are formatted into a buffer and written to DIR/rank-R.trace when the
// buffer fills and at tcaFinalize.
#include "base/trace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

#include "base/error.h"
#include "base/settings.h"
#include "base/trace_format.h"

namespace tca::trace {

bool g_enabled = false;

namespace {

constexpr int kFormatVersion = 1;
constexpr size_t kFlushBytes = size_t{1} << 20;

struct Writer {
  std::mutex mutex;
  std::FILE* file = nullptr;
  std::string path;
  fmt::memory_buffer buffer;  // fmt's own buffer: formatting appends without per-char calls
  uint64_t start = 0;
  uint64_t kicks = 0;
  // (peer, slot) -> when the first failed test of a wait happened.
  std::map<std::pair<int, int>, uint64_t> pending;
  std::vector<void (*)()> close_hooks;  // run by close(), outside the lock
};

Writer& writer() {
  static Writer* instance = new Writer();  // outlives every static destructor that may trace
  return *instance;
}

void flush_locked(Writer& w) {
  if (w.file == nullptr || w.buffer.size() == 0) return;
  std::fwrite(w.buffer.data(), 1, w.buffer.size(), w.file);
  w.buffer.clear();
}

// Appends "<t> <event> <fields>\n"; `t` is relative to the trace's start. Formats straight
// into the buffer (no temporaries): a traced call should stay close to an untraced one.
template <typename... Args>
void line(Writer& w, uint64_t at, const char* event, fmt::format_string<Args...> format,
          Args&&... args) {
  auto out = std::back_inserter(w.buffer);
  fmt::format_to(out, "{} {}", at >= w.start ? at - w.start : 0, event);
  fmt::format_to(out, format, std::forward<Args>(args)...);
  w.buffer.push_back('\n');
  if (w.buffer.size() >= kFlushBytes) flush_locked(w);
}

template <typename... Args>
void emit(uint64_t at, const char* event, fmt::format_string<Args...> format, Args&&... args) {
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.file == nullptr) return;
  line(w, at, event, format, std::forward<Args>(args)...);
}

// Names are single words in the file.
std::string word(const char* name) {
  std::string out = name != nullptr && *name != 0 ? name : "-";
  for (char& c : out)
    if (c <= ' ' || c == '=' || c > '~') c = '_';
  return out;
}

// Transport names are single lower-case words already; anything else is written as "-".
const char* path_word(const char* path) {
  if (path == nullptr || *path == 0) return "-";
  for (const char* c = path; *c != 0; ++c)
    if (*c <= ' ' || *c == '=' || *c > '~') return "-";
  return path;
}

void transfer_line(Writer& w, uint64_t at, const char* event, uint64_t kick_id, uint64_t dur,
                   const TransferRecord& t) {
  line(w, at, event,
       " {}={} src={} dst={} width={} count={} spitch={} dpitch={} skind={} dkind={} path={} "
       "notify={}",
       kick_id != 0 ? "kick" : "dur", kick_id != 0 ? kick_id : dur, t.src_rank, t.dst_rank, t.width,
       t.count, t.src_pitch, t.dst_pitch, kind_name(t.src_kind), kind_name(t.dst_kind),
       path_word(t.path), t.notify_slot);
}

}  // namespace

namespace {

tcaResult make_folder(const std::string& folder) {
  if (mkdir(folder.c_str(), 0777) == 0 || errno == EEXIST) {
    struct stat info {};
    if (stat(folder.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return TCA_SUCCESS;
  }
  TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "TCA_TRACE={}: cannot make the folder ({})", folder,
           std::strerror(errno));
}

}  // namespace

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

const char* kind_name(tcaMemKind kind) { return kind == TCA_MEM_GPU ? "gpu" : "cpu"; }

tcaResult open(int rank, int world, uint64_t host_hash) {
  std::string folder;
  bool set = false;
  TCA_CHECK(setting_text("TCA_TRACE", &folder, &set));  // base/settings.cc's table
  if (!set || folder.empty()) return TCA_SUCCESS;
  TCA_CHECK(make_folder(folder));
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.path = fmt::format("{}/rank-{}.trace", folder, rank);
  w.file = std::fopen(w.path.c_str(), "w");
  if (w.file == nullptr)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "TCA_TRACE: cannot write {} ({})", w.path,
             std::strerror(errno));
  w.start = now_ns();
  w.kicks = 0;
  w.pending.clear();
  w.buffer.clear();
  fmt::format_to(std::back_inserter(w.buffer),
                 "{} {} rank={} world={} host={:016x} clock={} start={} pid={}\n",
                 trace_format::kMagic, kFormatVersion, rank, world, host_hash, trace_format::kClock,
                 w.start, getpid());
  g_enabled = true;
  return TCA_SUCCESS;
}

void on_close(void (*hook)()) {
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (std::find(w.close_hooks.begin(), w.close_hooks.end(), hook) == w.close_hooks.end())
    w.close_hooks.push_back(hook);
}

void close() {
  Writer& w = writer();
  if (g_enabled) {
    std::vector<void (*)()> hooks;
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      hooks = w.close_hooks;
    }
    for (void (*hook)() : hooks) hook();  // they write lines of their own
  }
  std::lock_guard<std::mutex> lock(w.mutex);
  g_enabled = false;
  if (w.file == nullptr) return;
  line(w, now_ns(), trace_format::kEnd, "");
  flush_locked(w);
  std::fclose(w.file);
  w.file = nullptr;
}

void kick(uint64_t begin, uint64_t end, uint64_t chain, int channel,
          const std::vector<TransferRecord>& chain_transfers) {
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.file == nullptr) return;
  const uint64_t id = ++w.kicks;
  line(w, begin, trace_format::kKick, " dur={} id={} chain={:x} channel={} n={}", end - begin, id,
       chain, channel, chain_transfers.size());
  for (const TransferRecord& t : chain_transfers)
    transfer_line(w, begin, trace_format::kXfer, id, 0, t);
}

void put_or_get(uint64_t begin, const char* what, const TransferRecord& transfer) {
  const uint64_t end = now_ns();
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.file == nullptr) return;
  transfer_line(w, begin, what, 0, end - begin, transfer);
}

void notify(uint64_t begin, int dst_rank, int slot, const char* path) {
  const uint64_t end = now_ns();
  emit(begin, trace_format::kNotify, " dur={} dst={} slot={} path={}", end - begin, dst_rank, slot,
       path_word(path));
}

// The (peer, slot) whose first miss is recorded: later misses of a polling loop cost a compare.
thread_local std::pair<int, int> t_missing{-2, -2};

void test_missed(int peer, int slot) {
  if (t_missing == std::make_pair(peer, slot)) return;
  t_missing = {peer, slot};
  const uint64_t at = now_ns();
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.pending.try_emplace(std::make_pair(peer, slot), at);  // keeps the first miss
}

void wait(uint64_t begin, int peer, int slot, int from) {
  const uint64_t end = now_ns();
  if (t_missing == std::make_pair(peer, slot)) t_missing = {-2, -2};
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.file == nullptr) return;
  if (!w.pending.empty()) {
    const auto pending = w.pending.find({peer, slot});
    if (pending != w.pending.end()) {
      begin = std::min(begin, pending->second);
      w.pending.erase(pending);
    }
  }
  line(w, begin, trace_format::kWait, " dur={} peer={} slot={} from={}", end - begin, peer, slot,
       from);
}

void drain(uint64_t begin, int channel) {
  const uint64_t end = now_ns();
  emit(begin, trace_format::kDrain, " dur={} channel={}", end - begin, channel);
}

void pio(int owner, uint64_t offset, uint64_t bytes, tcaMemKind kind, const char* path) {
  emit(now_ns(), trace_format::kPio, " owner={} offset={} bytes={} kind={} path={}", owner, offset,
       bytes, kind_name(kind), path_word(path));
}

void fence(uint64_t begin) {
  const uint64_t end = now_ns();
  emit(begin, trace_format::kFence, " dur={}", end - begin);
}

void barrier(uint64_t begin) {
  const uint64_t end = now_ns();
  emit(begin, trace_format::kBarrier, " dur={}", end - begin);
}

void phase(bool begin, const char* name) {
  emit(now_ns(), begin ? trace_format::kPhaseBegin : trace_format::kPhaseEnd, " name={}",
       word(name));
}

void collective_begin(const char* kind, const char* algorithm, uint64_t bytes, int ranks,
                      tcaMemKind memory, const char* steps) {
  emit(now_ns(), trace_format::kCollBegin,
       " op={} algorithm={} bytes={} ranks={} memory={} steps={}", path_word(kind),
       path_word(algorithm), bytes, ranks, kind_name(memory), path_word(steps));
}

void device_collective_begin(uint64_t begin, const char* kind, const char* algorithm,
                             uint64_t bytes, int ranks, const char* protocol, int channels,
                             const char* call) {
  emit(begin, trace_format::kCollBegin,
       " op={} algorithm={} bytes={} ranks={} memory=gpu steps=device protocol={} channels={} "
       "call={}",
       path_word(kind), path_word(algorithm), bytes, ranks, path_word(protocol), channels,
       path_word(call));
}

void collective_end() { emit(now_ns(), trace_format::kCollEnd, ""); }

void stream_collective(uint64_t begin, uint64_t end, const char* kind, const char* algorithm,
                       uint64_t bytes, int ranks, const char* protocol, int channels) {
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.file == nullptr) return;
  line(w, begin, trace_format::kCollBegin,
       " op={} algorithm={} bytes={} ranks={} memory=gpu steps=device protocol={} channels={} "
       "call=stream {}={}",
       path_word(kind), path_word(algorithm), bytes, ranks, path_word(protocol), channels,
       trace_format::kTimedKey, trace_format::kTimedGpu);
  line(w, end, trace_format::kCollEnd, " {}={}", trace_format::kTimedKey, trace_format::kTimedGpu);
}

}  // namespace tca::trace
