// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// An NVTX tool for tests: loaded by nvtx3 from NVTX_INJECTION64_PATH (as Nsight Systems' own
// library would be), it records the ranges pushed and started in each domain and, at the
// process's exit, writes one line per distinct range to NVTX_RECORD_DIR/nvtx-PID.txt:
//   range DOMAIN CATEGORY-NAME MESSAGE COUNT
// then a line `unbalanced DOMAIN N` for every domain whose pushes and pops (or starts and ends)
// do not match. Nothing is written when no NVTX call came.
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace {

struct Domain {
  std::string name;
  std::map<uint32_t, std::string> categories;
  long open = 0;  // pushes - pops + starts - ends
};

struct Recorder {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<Domain>> domains;
  std::map<std::tuple<std::string, uint32_t, std::string>, long> ranges;  // domain, cat., text
  bool called = false;

  ~Recorder() { write(); }

  void write() {
    const char* dir = std::getenv("NVTX_RECORD_DIR");
    if (!called || dir == nullptr) return;
    const std::string path = std::string(dir) + "/nvtx-" + std::to_string(getpid()) + ".txt";
    std::FILE* file = std::fopen(path.c_str(), "w");
    if (file == nullptr) return;
    for (const auto& [key, count] : ranges) {
      const auto& [domain, category, message] = key;
      const auto found = domains.find(domain);
      std::string name = "-";
      if (found != domains.end() && found->second->categories.count(category) != 0)
        name = found->second->categories[category];
      std::fprintf(file, "range %s %s %s %ld\n", domain.c_str(), name.c_str(), message.c_str(),
                   count);
    }
    for (const auto& [name, domain] : domains)
      if (domain->open != 0) std::fprintf(file, "unbalanced %s %ld\n", name.c_str(), domain->open);
    std::fclose(file);
  }

  Domain* domain(nvtxDomainHandle_t handle) { return reinterpret_cast<Domain*>(handle); }

  void range(nvtxDomainHandle_t handle, const nvtxEventAttributes_t* event) {
    std::lock_guard<std::mutex> lock(mutex);
    called = true;
    Domain* d = domain(handle);
    std::string message = "-";
    if (event != nullptr && event->messageType == NVTX_MESSAGE_TYPE_ASCII &&
        event->message.ascii != nullptr)
      message = event->message.ascii;
    for (char& c : message)
      if (c == ' ') c = '_';
    ++ranges[{d != nullptr ? d->name : "(default)", event != nullptr ? event->category : 0,
              message}];
    if (d != nullptr) ++d->open;
  }

  void close(nvtxDomainHandle_t handle) {
    std::lock_guard<std::mutex> lock(mutex);
    if (Domain* d = domain(handle)) --d->open;
  }
};

Recorder& recorder() {
  static Recorder instance;
  return instance;
}

nvtxDomainHandle_t create_domain(const char* name) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.called = true;
  auto& slot = r.domains[name != nullptr ? name : "-"];
  if (!slot) slot = std::make_unique<Domain>();
  slot->name = name != nullptr ? name : "-";
  return reinterpret_cast<nvtxDomainHandle_t>(slot.get());
}

void name_category(nvtxDomainHandle_t handle, uint32_t category, const char* name) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (Domain* d = r.domain(handle)) d->categories[category] = name != nullptr ? name : "-";
}

int push(nvtxDomainHandle_t handle, const nvtxEventAttributes_t* event) {
  recorder().range(handle, event);
  return 0;
}

int pop(nvtxDomainHandle_t handle) {
  recorder().close(handle);
  return 0;
}

nvtxRangeId_t start(nvtxDomainHandle_t handle, const nvtxEventAttributes_t* event) {
  recorder().range(handle, event);
  return 1;
}

void end(nvtxDomainHandle_t handle, nvtxRangeId_t) { recorder().close(handle); }

template <typename Function>
void install(NvtxFunctionTable table, unsigned size, unsigned id, Function function) {
  if (id < size && table[id] != nullptr)
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || table == nullptr)
    return 0;
  recorder();  // made before any range, so destroyed (and written) after the last
  install(table, size, NVTX_CBID_CORE2_DomainCreateA, &create_domain);
  install(table, size, NVTX_CBID_CORE2_DomainNameCategoryA, &name_category);
  install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &push);
  install(table, size, NVTX_CBID_CORE2_DomainRangePop, &pop);
  install(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, &start);
  install(table, size, NVTX_CBID_CORE2_DomainRangeEnd, &end);
  return 1;
}
