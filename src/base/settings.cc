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

// A row of each kind: a count between bounds, a choice among "a|b|c", a text of the kind named.
SettingSpec count(const char* name, const char* default_text, int64_t min, int64_t max,
                  const char* meaning) {
  return {name, SettingKind::kCount, default_text, min, max, "", meaning};
}
SettingSpec choice(const char* name, const char* default_text, const char* choices,
                   const char* meaning) {
  return {name, SettingKind::kChoice, default_text, 0, 0, choices, meaning};
}
SettingSpec text(const char* name, const char* default_text, const char* what,
                 const char* meaning) {
  return {name, SettingKind::kText, default_text, 0, 0, what, meaning};
}

// The one table. Keep docs/SETTINGS.md in step (a unit test compares them).
const std::vector<SettingSpec> kSettings = {
    choice(
        "TCA_BOOTSTRAP", "auto", "auto|mpi|pmix|tcp|single",
        "how ranks find each other at tcaInit: auto takes mpi where the program initialized MPI or "
        "an MPI launcher started it, else pmix under a PMIx server, else tcp where TCA_ROOT or "
        "torchrun's variables are set, else a job of one rank (single); mpi and pmix where built"),
    count("TCA_RANK", "", 0, INT32_MAX - 1,
          "tcp bootstrap: this process's rank (with TCA_SIZE and TCA_ROOT; torchrun's RANK "
          "otherwise)"),
    count("TCA_SIZE", "", 1, INT32_MAX,
          "tcp bootstrap: the number of ranks (torchrun's WORLD_SIZE otherwise)"),
    text("TCA_ROOT", "", "host:port",
         "tcp bootstrap: where rank 0 listens and the others connect; default under torchrun: "
         "MASTER_ADDR and MASTER_PORT+1"),
    text("TCA_JOB_KEY", "", "any text",
         "tcp bootstrap: the secret every connection to the root proves it knows, so that another "
         "job's connection is refused; default: the launcher's job id, the root and the size"),
    text("TCA_SOCKET_IFNAME", "", "an interface name",
         "tcp bootstrap: the interface its connections bind to; default: the route to the root"),
    count("TCA_TIMEOUT_MS", "60000", 1, INT32_MAX,
          "how long a wait (notification, DMA, deregistration) may take before TCA_ERROR_TIMEOUT; "
          "tcaConfig.timeout_ms and tcaSetTimeout take precedence"),
    text("TCA_TRANSPORT", "auto", "auto, or a transport's name",
         "the transport AUTO prefers wherever it reaches (shm, cuda, ucx, mpi where built); "
         "tcaConfig.transport takes precedence"),
    text("TCA_HOST_ID", "", "block:K, cyclic:K or a host name",
         "splits one machine into hosts for tca: block:K puts ranks [0,K) on one host, [K,2K) on "
         "the next; cyclic:K puts rank r on host r % K; other text names this rank's host. Paths "
         "between hosts (mpi, ucx) then carry traffic between ranks of one machine"),
    choice("TCA_DEBUG", "none", "none|warn|info|trace",
           "log level of the library's messages on stderr"),
    text("TCA_TRACE", "", "a folder",
         "writes a trace per rank (rank-R.trace) into this folder; docs/SIM.md has the format"),
    choice(
        "TCA_COUNTERS", "0", "0|1|timed",
        "1 counts transfers, bytes, kicks, notifications, waits, timeouts and errors per peer, "
        "transport and direction, and times one operation in 16 for the wait time and the latency "
        "histograms (tcaGetCounters); timed times every operation; TCA_STATS implies 1"),
    text("TCA_STATS", "", "a file (%r: the rank) or a folder",
         "counts as TCA_COUNTERS=1 and writes each rank's counters as JSON at tcaFinalize; a path "
         "without %r is a folder that gets rank-R.stats.json"),
    choice(
        "TCA_DUMP_SIGNAL", "none", "none|usr1|usr2|urg|pwr",
        "on this signal a rank writes its state (what it waits for, chains in flight, notification "
        "counts, collective in progress, dead peers) at its next wait or call"),
    choice("TCA_DUMP_ON_TIMEOUT", "0", "0|1",
           "1 writes the rank's state when a wait times out or finds its peer dead"),
    text("TCA_DUMP_FILE", "", "a file (%r: the rank) or a folder",
         "where state dumps go (appended, one JSON line each); a path without %r is a folder that "
         "gets rank-R.dump.json; default stderr"),
    choice("TCA_NVTX", "0", "0|1",
           "1 marks kicks, drains, waits, notifications, puts, gets and collectives as NVTX ranges "
           "(domain tca) for Nsight Systems, where tca was built with CUDA's nvtx3"),
    choice(
        "TCA_CHOICE", "auto", "auto|measure|off",
        "the choice between transports by size where several reach a peer: auto measures it once "
        "per machine and caches it, measure measures it at every start, off keeps the registry's "
        "order"),
    text("TCA_CHOICE_FILE", "", "a file",
         "the cache of that choice; default $XDG_CACHE_HOME/tca (else ~/.cache/tca)/"
         "choice-HOST.txt"),
    choice(
        "TCA_CUDA_PATH", "auto", "auto|ce|sm",
        "engine of TCA_PATH_CUDA: per size from the calibration, or always the copy engines / SMs"),
    count("TCA_CUDA_CROSSOVER", "", 0, kNoMax,
          "bytes from which TCA_PATH_CUDA takes the copy engines, instead of the calibration"),
    count("TCA_CUDA_RESIDENT_IDLE_US", "1000", 1, 1000000,
          "microseconds the resident kernel of TCA_PATH_CUDA_RESIDENT waits for a kick before it "
          "leaves"),
    choice("TCA_CUDA_CALIBRATE", "0", "0|1",
           "1 measures the engine crossover again instead of reading the cache"),
    text("TCA_CUDA_CALIBRATION_FILE", "", "a file",
         "the calibration cache; default $XDG_CACHE_HOME/tca (else ~/.cache/tca)/"
         "calibration-HOST.json"),
    choice(
        "TCA_COLL_PROTOCOL", "auto", "auto|ll|inline|simple",
        "protocol of the device-initiated collectives: inline flags with the data (ll, inline) or "
        "data then a flag (simple); must be equal on every rank"),
    count(
        "TCA_COLL_RESIDENT_US", "200", 0, 1000000,
        "microseconds a resident kernel serving the host-called iterations of a one-block GPU "
        "collective (tcaCollConfig.resident_idle_us = 0) waits idle before it leaves; 0: a kernel "
        "launch per call"),
    count("TCA_COLL_CHANNELS", "", 1, 1024,
          "channels (blocks) of the device-initiated collectives; must be equal on every rank"),
    choice(
        "TCA_MPI_GUARD", "auto", "auto|on|off",
        "runs MPI calls that involve other ranks on a thread of their own, so that a rank on the "
        "same machine dying during one fails it with TCA_ERROR_PEER_FAILED instead of holding "
        "the caller forever; auto: where the launcher lets survivors run on (mpirun "
        "--enable-recovery)"),
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
