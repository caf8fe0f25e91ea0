// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A 64-bit cell of a control block (or any shared block) as an atomic, at a byte offset.
#pragma once

#include <atomic>
#include <cstdint>

namespace tca {

inline std::atomic<uint64_t>* cell_at(unsigned char* block, uint64_t offset) {
  return reinterpret_cast<std::atomic<uint64_t>*>(block + offset);
}

}  // namespace tca
