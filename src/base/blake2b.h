// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// BLAKE2b (RFC 7693), unkeyed: a cryptographic hash whose collisions and second preimages no
// one can find. The owner of a region keeps the BLAKE2b-256 of the handle it issued, so a peer
// accepts only those exact bytes (core/context.cc).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tca {

constexpr size_t kBlake2bMaxOutBytes = 64;

// Writes the first `out_bytes` (1..64) bytes of BLAKE2b with that output length over
// `bytes` bytes at `data` into `out`. Nothing is written for an out_bytes outside 1..64.
void blake2b(const void* data, size_t bytes, uint8_t* out, size_t out_bytes);

}  // namespace tca
