// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "base/settings.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace tca {
namespace {

constexpr int64_t kNoMax = INT64_MAX;

// The one table. Keep docs/SETTINGS.md in step (a unit test compares them).
const std::vector<SettingSpec> kSettings = {
    {"TCA_BOOTSTRAP", SettingKind::kChoice, "auto", 0, 0, "auto|mpi|pmix|tcp|single",
     "how ranks find each other at tcaInit: auto takes mpi where the program initialized MPI or "
     "an MPI launcher started it, else pmix under a PMIx server, else tcp where TCA_ROOT or "
     "torchrun's variables are set, else a job of one rank (single); mpi and pmix where built"},
    {"TCA_RANK", SettingKind::kCount, "", 0, INT32_MAX - 1, "",
     "tcp bootstrap: this process's rank (with TCA_SIZE and TCA_ROOT; torchrun's RANK otherwise)"},
    {"TCA_SIZE", SettingKind::kCount, "", 1, INT32_MAX, "",
     "tcp bootstrap: the number of ranks (torchrun's WORLD_SIZE otherwise)"},
    {"TCA_ROOT", SettingKind::kText, "", 0, 0, "host:port",
     "tcp bootstrap: where rank 0 listens and the others connect; default under torchrun: "
     "MASTER_ADDR and MASTER_PORT+1"},
    {"TCA_JOB_KEY", SettingKind::kText, "", 0, 0, "any text",
     "tcp bootstrap: the secret every connection to the root proves it knows, so that another "
     "job's connection is refused; default: the launcher's job id, the root and the size"},
    {"TCA_SOCKET_IFNAME", SettingKind::kText, "", 0, 0, "an interface name",
     "tcp bootstrap: the interface its connections bind to; default: the route to the root"},
    {"TCA_TIMEOUT_MS", SettingKind::kCount, "60000", 1, INT32_MAX, "",
     "how long a wait (notification, DMA, deregistration) may take before TCA_ERROR_TIMEOUT; "
     "tcaConfig.timeout_ms and tcaSetTimeout take precedence"},
    {"TCA_TRANSPORT", SettingKind::kText, "auto", 0, 0, "auto, or a transport's name",
     "the transport AUTO prefers wherever it reaches (shm, cuda, ucx, mpi where built); "
     "tcaConfig.transport takes precedence"},
    {"TCA_HOST_ID", SettingKind::kText, "", 0, 0, "block:K, cyclic:K or a host name",
     "splits one machine into hosts for tca: block:K puts ranks [0,K) on one host, [K,2K) on "
     "the next; cyclic:K puts rank r on host r % K; other text names this rank's host. Paths "
     "between hosts (mpi, ucx) then carry traffic between ranks of one machine"},
    {"TCA_DEBUG", SettingKind::kChoice, "none", 0, 0, "none|warn|info|trace",
     "log level of the library's messages on stderr"},
    {"TCA_TRACE", SettingKind::kText, "", 0, 0, "a folder",
     "writes a trace per rank (rank-R.trace) into this folder; docs/SIM.md has the format"},
    {"TCA_COUNTERS", SettingKind::kChoice, "0", 0, 0, "0|1|timed",
     "1 counts transfers, bytes, kicks, notifications, waits, timeouts and errors per peer, "
     "transport and direction, and times one operation in 16 for the wait time and the latency "
     "histograms (tcaGetCounters); timed times every operation; TCA_STATS implies 1"},
    {"TCA_STATS", SettingKind::kText, "", 0, 0, "a file (%r: the rank) or a folder",
     "counts as TCA_COUNTERS=1 and writes each rank's counters as JSON at tcaFinalize; a path "
     "without %r is a folder that gets rank-R.stats.json"},
    {"TCA_DUMP_SIGNAL", SettingKind::kChoice, "none", 0, 0, "none|usr1|usr2|urg|pwr",
     "on this signal a rank writes its state (what it waits for, chains in flight, notification "
     "counts, collective in progress, dead peers) at its next wait or call"},
    {"TCA_DUMP_ON_TIMEOUT", SettingKind::kChoice, "0", 0, 0, "0|1",
     "1 writes the rank's state when a wait times out or finds its peer dead"},
    {"TCA_DUMP_FILE", SettingKind::kText, "", 0, 0, "a file (%r: the rank) or a folder",
     "where state dumps go (appended, one JSON line each); a path without %r is a folder that "
     "gets rank-R.dump.json; default stderr"},
    {"TCA_NVTX", SettingKind::kChoice, "0", 0, 0, "0|1",
     "1 marks kicks, drains, waits, notifications, puts, gets and collectives as NVTX ranges "
     "(domain tca) for Nsight Systems, where tca was built with CUDA's nvtx3"},
    {"TCA_CHOICE", SettingKind::kChoice, "auto", 0, 0, "auto|measure|off",
     "the choice between transports by size where several reach a peer: auto measures it once "
     "per machine and caches it, measure measures it at every start, off keeps the registry's "
     "order"},
    {"TCA_CHOICE_FILE", SettingKind::kText, "", 0, 0, "a file",
     "the cache of that choice; default $XDG_CACHE_HOME/tca (else ~/.cache/tca)/"
     "choice-HOST.txt"},
    {"TCA_CUDA_PATH", SettingKind::kChoice, "auto", 0, 0, "auto|ce|sm",
     "engine of TCA_PATH_CUDA: per size from the calibration, or always the copy engines / SMs"},
    {"TCA_CUDA_CROSSOVER", SettingKind::kCount, "", 0, kNoMax, "",
     "bytes from which TCA_PATH_CUDA takes the copy engines, instead of the calibration"},
    {"TCA_CUDA_RESIDENT_IDLE_US", SettingKind::kCount, "1000", 1, 1000000, "",
     "microseconds the resident kernel of TCA_PATH_CUDA_RESIDENT waits for a kick before it "
     "leaves"},
    {"TCA_CUDA_CALIBRATE", SettingKind::kChoice, "0", 0, 0, "0|1",
     "1 measures the engine crossover again instead of reading the cache"},
    {"TCA_CUDA_CALIBRATION_FILE", SettingKind::kText, "", 0, 0, "a file",
     "the calibration cache; default $XDG_CACHE_HOME/tca (else ~/.cache/tca)/"
     "calibration-HOST.json"},
    {"TCA_COLL_PROTOCOL", SettingKind::kChoice, "auto", 0, 0, "auto|ll|inline|simple",
     "protocol of the device-initiated collectives: inline flags with the data (ll, inline) or "
     "data then a flag (simple); must be equal on every rank"},
    {"TCA_COLL_RESIDENT_US", SettingKind::kCount, "200", 0, 1000000, "",
     "microseconds a resident kernel serving the host-called iterations of a one-block GPU "
     "collective (tcaCollConfig.resident_idle_us = 0) waits idle before it leaves; 0: a kernel "
     "launch per call"},
    {"TCA_COLL_CHANNELS", SettingKind::kCount, "", 1, 1024, "",
     "channels (blocks) of the device-initiated collectives; must be equal on every rank"},
    {"TCA_MPI_GUARD", SettingKind::kChoice, "auto", 0, 0, "auto|on|off",
     "runs MPI calls that involve other ranks on a thread of their own, so that a rank on the "
     "same machine dying during one fails it with TCA_ERROR_PEER_FAILED instead of holding "
     "the caller forever; auto: where the launcher lets survivors run on (mpirun "
     "--enable-recovery)"},
};

const char* environment(const char* name, bool* set) {
  const char* value = std::getenv(name);
  const bool present = value != nullptr && *value != '\0';
  if (set != nullptr) *set = present;
  return present ? value : nullptr;
}

tcaResult lookup(const char* name, SettingKind kind, const SettingSpec** out) {
  *out = find_setting(name);
  if (*out == nullptr || (*out)->kind != kind)
    TCA_FAIL(TCA_ERROR_INTERNAL, "{} is not a setting of that kind in the settings table", name);
  return TCA_SUCCESS;
}

}  // namespace

const std::vector<SettingSpec>& settings_table() { return kSettings; }

const SettingSpec* find_setting(const char* name) {
  for (const SettingSpec& spec : kSettings)
    if (std::strcmp(spec.name, name) == 0) return &spec;
  return nullptr;
}

tcaResult parse_count(const SettingSpec& spec, const std::string& text, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  const bool digits_first = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) ||
                                              (text[0] == '-' && text.size() > 1));
  if (!digits_first || *end != '\0' || errno != 0 || value < spec.min || value > spec.max) {
    if (spec.max == kNoMax)
      TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{}='{}' is not a whole number of at least {}",
               spec.name, text, spec.min);
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{}='{}' is not a whole number in [{}, {}]", spec.name,
             text, spec.min, spec.max);
  }
  *out = value;
  return TCA_SUCCESS;
}

tcaResult parse_choice(const SettingSpec& spec, const std::string& text) {
  const std::string choices = spec.choices;
  size_t begin = 0;
  while (begin <= choices.size()) {
    const size_t end = std::min(choices.find('|', begin), choices.size());
    if (choices.compare(begin, end - begin, text) == 0 && end - begin == text.size())
      return TCA_SUCCESS;
    begin = end + 1;
  }
  TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{}='{}' is not one of {}", spec.name, text, choices);
}

tcaResult setting_count(const char* name, int64_t* out, bool* set) {
  const SettingSpec* spec = nullptr;
  TCA_CHECK(lookup(name, SettingKind::kCount, &spec));
  const char* value = environment(name, set);
  if (value == nullptr && *spec->default_text == '\0') return TCA_SUCCESS;  // *out stays
  return parse_count(*spec, value != nullptr ? value : spec->default_text, out);
}

tcaResult setting_choice(const char* name, std::string* out, bool* set) {
  const SettingSpec* spec = nullptr;
  TCA_CHECK(lookup(name, SettingKind::kChoice, &spec));
  const char* value = environment(name, set);
  std::string text = value != nullptr ? value : spec->default_text;
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  TCA_CHECK(parse_choice(*spec, text));
  *out = text;
  return TCA_SUCCESS;
}

tcaResult setting_text(const char* name, std::string* out, bool* set) {
  const SettingSpec* spec = nullptr;
  TCA_CHECK(lookup(name, SettingKind::kText, &spec));
  const char* value = environment(name, set);
  *out = value != nullptr ? value : spec->default_text;
  return TCA_SUCCESS;
}

}  // namespace tca
