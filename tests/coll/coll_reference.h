// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The host reference of the collective suites (CPU: coll_test.cc, GPU: cuda/coll_gpu_test.cc):
// the shape of a case, the exact bytes its buffers hold before and after an iteration, and
// the byte-exact check of a result.
#pragma once

#include <gtest/gtest.h>
#include <tca/tca_coll.h>

#include <cstddef>
#include <string>
#include <vector>

#include "coll_values.h"

namespace tca_test {

inline constexpr tcaDataType kCollTypes[] = {TCA_INT32, TCA_INT64, TCA_FLOAT, TCA_DOUBLE};
inline constexpr tcaRedOp kCollOps[] = {TCA_SUM, TCA_MAX, TCA_MIN};
inline constexpr tcaCollAlgorithm kCollAlgorithms[] = {
    TCA_COLL_AUTO,          TCA_COLL_RING,  TCA_COLL_NEIGHBOR_EXCHANGE, TCA_COLL_RECURSIVE_DOUBLING,
    TCA_COLL_DISSEMINATION, TCA_COLL_DIRECT};

const char* type_name(tcaDataType type);
const char* op_name(tcaRedOp op);
// The parameter name of an algorithm-parameterized suite.
std::string algorithm_param_name(const ::testing::TestParamInfo<tcaCollAlgorithm>& info);

// One persistent collective's shape and placement.
struct CollCase {
  tcaCollKind kind = TCA_COLL_ALLREDUCE;
  tcaDataType type = TCA_DOUBLE;
  tcaRedOp op = TCA_SUM;
  size_t count = 1;
  bool in_place = false;
  tcaCollConfig config{};

  size_t send_bytes() const { return count * tcaDataTypeSize(type); }
  size_t recv_bytes(int ranks) const;
  // Where sendbuf starts in recvbuf when in place.
  size_t in_place_offset(int rank) const;
  std::string describe() const;
};

// The bytes `rank` contributes in iteration `round`.
std::vector<unsigned char> send_image(const CollCase& c, int rank, int round);
// What recvbuf holds before iteration `round` starts: poison, except for this rank's
// contribution where an in-place collective takes it from.
std::vector<unsigned char> recv_image_before(const CollCase& c, int rank, int ranks, int round);
// recvbuf's bytes once iteration `round` is complete on `ranks` ranks.
std::vector<unsigned char> result_image(const CollCase& c, int ranks, int round);

// recvbuf (host bytes) holds the result of iteration `round`; names the first wrong element
// and, for an allgather, whose block it is in.
::testing::AssertionResult holds_result(const CollCase& c, int ranks, int round,
                                        const void* recvbuf);

}  // namespace tca_test
