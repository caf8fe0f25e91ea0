// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// CRC-64 with the ECMA-182 polynomial, bit-reflected, initial value and final xor all ones
// (the parameters of CRC-64/XZ). It detects accidental corruption — every error burst of up to
// 64 bits — and nothing more: anyone can make any bytes reach any CRC value, so it never decides
// whether a handle is genuine.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tca {

uint64_t crc64(const void* data, size_t bytes);

}  // namespace tca
