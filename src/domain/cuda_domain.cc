// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "domain/cuda_domain.h"

#include <cudaTypedefs.h>

#include <cstring>

#include "base/error.h"
#include "base/log.h"

namespace tca {
namespace {

std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}"
      "{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
      b[15]);
}

// Peers map tcaMalloc'd GPU memory through CUDA IPC. Copy-engine pushes into a mapping whose
// allocation is not a whole number of 2 MiB pages ran at 290-300 GB/s against 375-390 for whole
// pages (64 and 256 MiB ping-pongs between two H200s, docs/PERFORMANCE_HISTORY.md), so
// allocations of 2 MiB or more get whole pages; regions keep the size asked for.
constexpr size_t kLargePageBytes = size_t{2} << 20;

}  // namespace

size_t allocation_bytes(size_t bytes) {
  if (bytes < kLargePageBytes || bytes > SIZE_MAX - kLargePageBytes) return bytes;
  return (bytes + kLargePageBytes - 1) / kLargePageBytes * kLargePageBytes;
}

tcaResult device_uuid(int device, std::string* out) {
  cudaDeviceProp properties = {};
  TCA_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  *out = format_uuid(properties.uuid);
  return TCA_SUCCESS;
}

tcaResult allocation_range(const void* ptr, uintptr_t* base, size_t* bytes) {
  static PFN_cuMemGetAddressRange_v3020 get_range = nullptr;
  if (get_range == nullptr) {
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    TCA_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange",
                                                    reinterpret_cast<void**>(&get_range), 3020,
                                                    cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || get_range == nullptr)
      TCA_FAIL(TCA_ERROR_TRANSPORT, "the CUDA driver has no cuMemGetAddressRange");
  }
  CUdeviceptr begin = 0;
  const CUresult result = get_range(&begin, bytes, reinterpret_cast<CUdeviceptr>(ptr));
  if (result != CUDA_SUCCESS)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} is not inside a device allocation (driver error {})",
             ptr, static_cast<int>(result));
  *base = static_cast<uintptr_t>(begin);
  return TCA_SUCCESS;
}

CudaDomain* cuda_domain(MemoryDomain* gpu_domain) { return dynamic_cast<CudaDomain*>(gpu_domain); }

// A rank without a usable GPU still joins every collective; its GPU calls then fail with the
// reason recorded here. Ranks of one machine share its GPUs round robin (whatever TCA_HOST_ID
// says: the GPUs are the machine's).
tcaResult CudaDomain::init() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    cudaGetLastError();
    problem_ = error != cudaSuccess
                   ? fmt::format("no CUDA device is usable: {}", cudaGetErrorString(error))
                   : std::string("no CUDA device is visible");
    return TCA_SUCCESS;
  }
  const int device = machine_rank_ % count;
  const auto set_up = [&]() -> tcaResult {
    TCA_CUDA_CHECK(cudaSetDevice(device));
    return device_uuid(device, &uuid_);
  };
  if (set_up() != TCA_SUCCESS) {
    problem_ = fmt::format("setting up CUDA device {} failed: {}", device, last_error_message());
    TCA_WARN("{}", problem_);
    clear_last_error();
    return TCA_SUCCESS;
  }
  device_ = device;
  return TCA_SUCCESS;
}

void CudaDomain::disable(const std::string& reason) {
  problem_ = reason;
  device_ = -1;
}

tcaResult CudaDomain::require_device() const {
  if (device_ < 0) TCA_FAIL(TCA_ERROR_UNSUPPORTED, "rank {} has no GPU: {}", rank_, problem_);
  return TCA_SUCCESS;
}

tcaResult CudaDomain::use_device() const {
  int current = -1;
  TCA_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device_) TCA_CUDA_CHECK(cudaSetDevice(device_));
  return TCA_SUCCESS;
}

tcaResult CudaDomain::allocate(size_t bytes, void** ptr) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  Allocation allocation;
  TCA_CHECK(make_device_memory(allocation_bytes(bytes), &allocation.memory));
  allocation.bytes = bytes;
  *ptr = allocation.memory.get();
  allocations_.emplace(reinterpret_cast<uintptr_t>(*ptr), std::move(allocation));
  return TCA_SUCCESS;
}

bool CudaDomain::find_allocation(const void* ptr, size_t* bytes) const {
  const auto found = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
  if (found == allocations_.end()) return false;
  *bytes = found->second.bytes;
  return true;
}

tcaResult CudaDomain::release(void* ptr) {
  const auto found = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
  if (found == allocations_.end())
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "{} is not GPU memory from tcaMalloc", ptr);
  TCA_CHECK(use_device());
  for (const auto& hook : release_hooks_) hook();
  allocations_.erase(found);
  return TCA_SUCCESS;
}

bool CudaDomain::owns_address(uintptr_t address) const {
  for (const auto& [begin, allocation] : allocations_)
    if (address >= begin && address < begin + allocation_bytes(allocation.bytes)) return true;
  return false;
}

tcaResult CudaDomain::pin(void* ptr, size_t bytes, HostRegistration* out,
                          unsigned char** device) const {
  TCA_CUDA_CHECK(cudaHostRegister(ptr, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
  *out = HostRegistration(ptr);
  void* mapped = nullptr;
  TCA_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, ptr, 0));
  *device = static_cast<unsigned char*>(mapped);
  return TCA_SUCCESS;
}

void CudaDomain::allocated_elsewhere(void* ptr, size_t bytes) {
  if (device_ < 0) return;
  HostRegistration pinned;
  unsigned char* device = nullptr;
  if (use_device() != TCA_SUCCESS || pin(ptr, bytes, &pinned, &device) != TCA_SUCCESS) {
    // Not fatal: a chain that uses the block pins its region then.
    TCA_WARN("could not pin host block {} ({} bytes) for the GPU: {}", ptr, bytes,
             last_error_message());
    clear_last_error();
    return;
  }
  pinned_blocks_.emplace(reinterpret_cast<uintptr_t>(ptr), std::move(pinned));
}

void CudaDomain::releasing_elsewhere(void* ptr) {
  pinned_blocks_.erase(reinterpret_cast<uintptr_t>(ptr));
}

bool CudaDomain::contains(const void* ptr) const {
  if (device_ < 0 || ptr == nullptr) return false;
  cudaPointerAttributes attributes = {};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice;
}

unsigned char* CudaDomain::mapped_host_address(const void* ptr, size_t bytes) const {
  const auto device_of = [](const void* address) -> unsigned char* {
    cudaPointerAttributes attributes = {};
    if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    if (attributes.type != cudaMemoryTypeHost) return nullptr;
    return static_cast<unsigned char*>(attributes.devicePointer);
  };
  unsigned char* first = device_of(ptr);
  unsigned char* last = device_of(static_cast<const unsigned char*>(ptr) + bytes - 1);
  return first != nullptr && last == first + bytes - 1 ? first : nullptr;
}

tcaResult CudaDomain::export_range(void* ptr, size_t bytes, PeerRegion* region) {
  TCA_CHECK(require_device());
  TCA_CHECK(use_device());
  cudaPointerAttributes attributes = {};
  TCA_CUDA_CHECK(cudaPointerGetAttributes(&attributes, ptr));
  if (attributes.type != cudaMemoryTypeDevice)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "{} is not device memory, but was registered as TCA_MEM_GPU", ptr);
  if (attributes.device != device_)
    TCA_FAIL(TCA_ERROR_UNSUPPORTED, "{} is memory of GPU {}; this rank's GPU is {}", ptr,
             attributes.device, device_);
  uintptr_t base = 0;
  size_t whole = 0;
  TCA_CHECK(allocation_range(ptr, &base, &whole));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  if (bytes > base + whole - begin)
    TCA_FAIL(TCA_ERROR_OUT_OF_BOUNDS,
             "region {} + {} bytes runs past its device allocation ({} bytes at {:#x})", ptr, bytes,
             whole, base);
  cudaIpcMemHandle_t handle;
  static_assert(sizeof(handle) <= sizeof(region->wire.device_ipc), "IPC handle must fit");
  TCA_CUDA_CHECK(cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(base)));
  std::memcpy(region->wire.device_ipc, &handle, sizeof(handle));
  region->wire.device_offset = begin - base;
  return TCA_SUCCESS;
}

tcaResult make_gpu_domain(const DomainSetup& setup, std::unique_ptr<MemoryDomain>* out) {
  auto domain = std::make_unique<CudaDomain>(setup);
  TCA_CHECK(domain->init());
  *out = std::move(domain);
  return TCA_SUCCESS;
}

}  // namespace tca
