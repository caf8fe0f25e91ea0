// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Checked messages: a seeded byte pattern in blocks, written into memory of either kind, and a
// check that finds the first wrong byte (gaps between blocks must keep their poison), so a path
// that moves nothing, or the wrong bytes, cannot pass. GPU memory is reached through the CUDA
// runtime in CUDA builds.
#pragma once

#include <tca/tca.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tca_harness {

constexpr unsigned char kPoison = 0xA5;

// `count` blocks of `width` bytes, `pitch` bytes apart, from offset 0 of a buffer.
struct Blocks {
  size_t width;
  size_t pitch;
  size_t count;
  size_t bytes() const { return width * count; }
  size_t extent() const { return (count - 1) * pitch + width; }
};

uint8_t pattern_byte(uint64_t seed, size_t offset);
void fill_pattern(unsigned char* buffer, const Blocks& blocks, uint64_t seed);
// Describes the first wrong byte (blocks must hold the pattern, gaps the poison), or "".
std::string find_corruption(const unsigned char* buffer, const Blocks& blocks, uint64_t seed);

// Host bytes into GPU memory and back, complete on return (an upload has landed before any
// stream may read it). CUDA builds; elsewhere they end the job (no GPU memory exists there).
void upload_to_gpu(void* gpu_dst, const void* host_src, size_t bytes);
void download_from_gpu(void* host_dst, const void* gpu_src, size_t bytes);

// The same on a buffer of memory kind `kind`, seen from the host: complete when they return.
void fill_message(tcaMemKind kind, unsigned char* buffer, const Blocks& blocks, uint64_t seed);
void poison_message(tcaMemKind kind, unsigned char* buffer, const Blocks& blocks);
std::string check_message(tcaMemKind kind, const unsigned char* buffer, const Blocks& blocks,
                          uint64_t seed);

}  // namespace tca_harness
