// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/verify.h"

#include <cstdio>
#include <cstring>
#include <vector>

#ifdef TCA_HARNESS_CUDA
#include <cuda_runtime_api.h>

#include "tca_harness/cuda_check.h"
#endif
#include "tca_harness/check.h"

namespace tca_harness {

uint8_t pattern_byte(uint64_t seed, size_t offset) {
  uint64_t x = seed + offset * 0x9E3779B97F4A7C15ull;  // splitmix64
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint8_t>(x ^ (x >> 31));
}

void fill_pattern(unsigned char* buffer, const Blocks& blocks, uint64_t seed) {
  for (size_t block = 0; block < blocks.count; ++block) {
    const size_t begin = block * blocks.pitch;
    for (size_t offset = begin; offset < begin + blocks.width; ++offset)
      buffer[offset] = pattern_byte(seed, offset);
  }
}

// Describes the first wrong byte (blocks must hold the pattern, gaps the poison), or "".
std::string find_corruption(const unsigned char* buffer, const Blocks& blocks, uint64_t seed) {
  auto mismatch = [&](size_t offset, unsigned expected) {
    char text[128];
    std::snprintf(text, sizeof text, "byte %zu is 0x%02x, expected 0x%02x%s", offset,
                  unsigned{buffer[offset]}, expected,
                  expected == kPoison ? " (a gap between blocks was written)" : "");
    return std::string(text);
  };
  for (size_t block = 0; block < blocks.count; ++block) {
    const size_t begin = block * blocks.pitch;
    for (size_t offset = begin; offset < begin + blocks.width; ++offset)
      if (buffer[offset] != pattern_byte(seed, offset))
        return mismatch(offset, pattern_byte(seed, offset));
    const size_t gap_end = block + 1 < blocks.count ? begin + blocks.pitch : begin + blocks.width;
    for (size_t offset = begin + blocks.width; offset < gap_end; ++offset)
      if (buffer[offset] != kPoison) return mismatch(offset, kPoison);
  }
  return "";
}

void upload_to_gpu(void* gpu_dst, const void* host_src, size_t bytes) {
#ifdef TCA_HARNESS_CUDA
  check(cudaMemcpy(gpu_dst, host_src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  // From pageable memory the copy may still be landing: nothing may read it before it has.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#else
  (void)gpu_dst, (void)host_src, (void)bytes;
  die("GPU memory needs a CUDA build");
#endif
}

void download_from_gpu(void* host_dst, const void* gpu_src, size_t bytes) {
#ifdef TCA_HARNESS_CUDA
  check(cudaMemcpy(host_dst, gpu_src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
#else
  (void)host_dst, (void)gpu_src, (void)bytes;
  die("GPU memory needs a CUDA build");
#endif
}

void fill_message(tcaMemKind kind, unsigned char* buffer, const Blocks& blocks, uint64_t seed) {
  if (kind == TCA_MEM_GPU) {
    std::vector<unsigned char> staged(blocks.extent());
    fill_pattern(staged.data(), blocks, seed);
    upload_to_gpu(buffer, staged.data(), staged.size());
    return;
  }
  fill_pattern(buffer, blocks, seed);
}

void poison_message(tcaMemKind kind, unsigned char* buffer, const Blocks& blocks) {
#ifdef TCA_HARNESS_CUDA
  if (kind == TCA_MEM_GPU) {
    check(cudaMemset(buffer, kPoison, blocks.extent()), "cudaMemset");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // poisoned before the barrier
    return;
  }
#endif
  (void)kind;
  std::memset(buffer, kPoison, blocks.extent());
}

std::string check_message(tcaMemKind kind, const unsigned char* buffer, const Blocks& blocks,
                          uint64_t seed) {
  if (kind == TCA_MEM_GPU) {
    std::vector<unsigned char> landed(blocks.extent());
    download_from_gpu(landed.data(), buffer, landed.size());
    return find_corruption(landed.data(), blocks, seed);
  }
  return find_corruption(buffer, blocks, seed);
}

}  // namespace tca_harness
