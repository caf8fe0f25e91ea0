// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// NVTX ranges (TCA_NVTX=1) through CUDA's header-only nvtx3: without a tool attached (Nsight
// Systems) every call returns at once. A domain "tca" holds them, coloured by kind.
#include "core/observe/state.h"

#if TCA_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace tca::observe {

#if TCA_HAVE_NVTX
namespace {

// One category per kind of range, named in the domain (Nsight Systems groups by them).
uint32_t category_of(uint32_t color) {
  switch (color) {
    case kColorKick:
      return 1;
    case kColorWait:
      return 2;
    case kColorNotify:
      return 3;
    case kColorCollective:
      return 4;
    default:
      return 5;
  }
}

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t handle = [] {
    nvtxDomainHandle_t made = nvtxDomainCreateA("tca");
    const char* names[] = {"transfer", "wait", "notify", "collective", "phase"};
    for (uint32_t i = 0; i < 5; ++i) nvtxDomainNameCategoryA(made, i + 1, names[i]);
    return made;
  }();
  return handle;
}

nvtxEventAttributes_t attributes(const char* what, uint32_t color) {
  nvtxEventAttributes_t event{};
  event.version = NVTX_VERSION;
  event.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  event.colorType = NVTX_COLOR_ARGB;
  event.color = color;
  event.category = category_of(color);
  event.messageType = NVTX_MESSAGE_TYPE_ASCII;
  event.message.ascii = what;
  return event;
}

}  // namespace

void nvtx_push_on(const char* what, uint32_t color) {
  if (!state().nvtx) return;
  const nvtxEventAttributes_t event = attributes(what, color);
  nvtxDomainRangePushEx(domain(), &event);
}

void nvtx_pop_on() {
  if (state().nvtx) nvtxDomainRangePop(domain());
}

uint64_t nvtx_start(const char* what, uint32_t color) {
  if (!state().nvtx) return 0;
  const nvtxEventAttributes_t event = attributes(what, color);
  return nvtxDomainRangeStartEx(domain(), &event);
}

void nvtx_end(uint64_t range) {
  if (state().nvtx) nvtxDomainRangeEnd(domain(), range);
}
#else
void nvtx_push_on(const char*, uint32_t) {}
void nvtx_pop_on() {}
uint64_t nvtx_start(const char*, uint32_t) { return 0; }
void nvtx_end(uint64_t) {}
#endif

}  // namespace tca::observe
