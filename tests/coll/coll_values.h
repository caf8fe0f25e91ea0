// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The data of the collective tests, for host code and for the GPU suite's kernels alike: rank
// r's element i in iteration `round` is a small signed integer, exact in every type, so sums
// of floats are exact and results compare byte for byte.
#pragma once

#include <tca/tca_coll.h>

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define TCA_TEST_HOST_DEVICE __host__ __device__
#else
#define TCA_TEST_HOST_DEVICE
#endif

namespace tca_test {

// Rank r's element i in iteration `round`: small, signed, different in every round.
TCA_TEST_HOST_DEVICE inline int64_t contribution(int rank, size_t i, int round) {
  return static_cast<int64_t>((rank * 37 + i * 11 + round * 23) % 101) - 40;
}

// Element i of an allreduce's result on `ranks` ranks.
TCA_TEST_HOST_DEVICE inline int64_t reduced(tcaRedOp op, int ranks, size_t i, int round) {
  int64_t result = contribution(0, i, round);
  for (int r = 1; r < ranks; ++r) {
    const int64_t value = contribution(r, i, round);
    if (op == TCA_SUM) {
      result += value;
    } else if (op == TCA_MAX) {
      result = value > result ? value : result;
    } else {
      result = value < result ? value : result;
    }
  }
  return result;
}

// Element i of a buffer of `type`, from an integer (every value used is exact in every type).
TCA_TEST_HOST_DEVICE inline void store(tcaDataType type, void* base, size_t i, int64_t value) {
  switch (type) {
    case TCA_INT32:
      static_cast<int32_t*>(base)[i] = static_cast<int32_t>(value);
      break;
    case TCA_INT64:
      static_cast<int64_t*>(base)[i] = value;
      break;
    case TCA_FLOAT:
      static_cast<float*>(base)[i] = static_cast<float>(value);
      break;
    case TCA_DOUBLE:
      static_cast<double*>(base)[i] = static_cast<double>(value);
      break;
  }
}

// Element i of a collective's result: allreduce, or allgather (rank i / count's block).
TCA_TEST_HOST_DEVICE inline int64_t result_element(tcaCollKind kind, tcaRedOp op, size_t count,
                                                   int ranks, size_t i, int round) {
  if (kind == TCA_COLL_ALLREDUCE) return reduced(op, ranks, i, round);
  return contribution(static_cast<int>(i / count), i % count, round);
}

}  // namespace tca_test
