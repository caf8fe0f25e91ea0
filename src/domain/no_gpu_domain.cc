// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU memory domain of builds without CUDA: there is no GPU memory to allocate or register.
#include "base/error.h"
#include "domain/memory_domain.h"

namespace tca {
namespace {

constexpr const char* kReason = "GPU memory needs a build with CUDA (this one has none)";

class NoGpuDomain final : public MemoryDomain {
 public:
  tcaMemKind kind() const override { return TCA_MEM_GPU; }
  const char* name() const override { return "none"; }
  std::string unavailable_reason() const override { return kReason; }
  tcaResult allocate(size_t, void**) override { TCA_FAIL(TCA_ERROR_UNSUPPORTED, "{}", kReason); }
  bool find_allocation(const void*, size_t*) const override { return false; }
  tcaResult release(void* ptr) override {
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} is not GPU memory from tcaMalloc", ptr);
  }
  bool contains(const void*) const override { return false; }
  tcaResult export_range(void*, size_t, PeerRegion*) override {
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "{}", kReason);
  }
};

}  // namespace

tcaResult make_gpu_domain(const DomainSetup&, std::unique_ptr<MemoryDomain>* out) {
  *out = std::make_unique<NoGpuDomain>();
  return TCA_SUCCESS;
}

}  // namespace tca
