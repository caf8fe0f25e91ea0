// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "coll_reference.h"

#include <algorithm>
#include <cstring>

#include "test_util.h"

namespace tca_test {

const char* type_name(tcaDataType type) {
  switch (type) {
    case TCA_INT32:
      return "int32";
    case TCA_INT64:
      return "int64";
    case TCA_FLOAT:
      return "float";
    case TCA_DOUBLE:
      return "double";
  }
  return "?";
}

const char* op_name(tcaRedOp op) {
  switch (op) {
    case TCA_SUM:
      return "sum";
    case TCA_MAX:
      return "max";
    case TCA_MIN:
      return "min";
  }
  return "?";
}

std::string algorithm_param_name(const ::testing::TestParamInfo<tcaCollAlgorithm>& info) {
  return tcaCollAlgorithmName(info.param);
}

size_t CollCase::recv_bytes(int ranks) const {
  return kind == TCA_COLL_ALLGATHER ? send_bytes() * ranks : send_bytes();
}

size_t CollCase::in_place_offset(int rank) const {
  return kind == TCA_COLL_ALLGATHER ? send_bytes() * rank : 0;
}

std::string CollCase::describe() const {
  return std::string(kind == TCA_COLL_ALLREDUCE ? "allreduce " : "allgather ") + type_name(type) +
         " " + (kind == TCA_COLL_ALLREDUCE ? op_name(op) : "") + " count " + std::to_string(count) +
         (in_place ? " in place" : " out of place") + " algorithm " +
         tcaCollAlgorithmName(config.algorithm) + " topology " +
         std::to_string(config.topology.kind) + " memory " + kind_name(config.memory);
}

std::vector<unsigned char> send_image(const CollCase& c, int rank, int round) {
  std::vector<unsigned char> bytes(c.send_bytes());
  for (size_t i = 0; i < c.count; ++i) store(c.type, bytes.data(), i, contribution(rank, i, round));
  return bytes;
}

std::vector<unsigned char> recv_image_before(const CollCase& c, int rank, int ranks, int round) {
  std::vector<unsigned char> bytes(c.recv_bytes(ranks), kPoison);
  if (c.in_place && c.count > 0) {  // nothing to place (and no buffer) for zero elements
    const std::vector<unsigned char> mine = send_image(c, rank, round);
    std::memcpy(bytes.data() + c.in_place_offset(rank), mine.data(), mine.size());
  }
  return bytes;
}

std::vector<unsigned char> result_image(const CollCase& c, int ranks, int round) {
  std::vector<unsigned char> bytes(c.recv_bytes(ranks));
  const size_t elements = bytes.size() / tcaDataTypeSize(c.type);
  for (size_t i = 0; i < elements; ++i)
    store(c.type, bytes.data(), i, result_element(c.kind, c.op, c.count, ranks, i, round));
  return bytes;
}

namespace {

std::string element_text(tcaDataType type, const unsigned char* element) {
  int32_t i32;
  int64_t i64;
  float f;
  double d;
  switch (type) {
    case TCA_INT32:
      std::memcpy(&i32, element, sizeof(i32));
      return std::to_string(i32);
    case TCA_INT64:
      std::memcpy(&i64, element, sizeof(i64));
      return std::to_string(i64);
    case TCA_FLOAT:
      std::memcpy(&f, element, sizeof(f));
      return std::to_string(f);
    case TCA_DOUBLE:
      std::memcpy(&d, element, sizeof(d));
      return std::to_string(d);
  }
  return "?";
}

}  // namespace

::testing::AssertionResult holds_result(const CollCase& c, int ranks, int round,
                                        const void* recvbuf) {
  const std::vector<unsigned char> expected = result_image(c, ranks, round);
  const auto* got = static_cast<const unsigned char*>(recvbuf);
  if (expected.empty() || std::memcmp(got, expected.data(), expected.size()) == 0)
    return ::testing::AssertionSuccess();
  const size_t element = tcaDataTypeSize(c.type);
  size_t wrong = 0;
  size_t first = 0;
  for (size_t i = 0; i < expected.size(); i += element) {
    if (std::memcmp(got + i, expected.data() + i, element) == 0) continue;
    if (wrong++ == 0) first = i;
  }
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << wrong << " wrong element(s) of " << expected.size() / element << " after iteration "
          << round << "; first: element " << first / element;
  if (c.kind == TCA_COLL_ALLGATHER)
    failure << " (element " << first / element % c.count << " of rank " << first / element / c.count
            << "'s block)";
  const bool unwritten = std::all_of(got + first, got + first + element,
                                     [](unsigned char byte) { return byte == kPoison; });
  return failure << " is "
                 << (unwritten ? "poison (never written)" : element_text(c.type, got + first))
                 << ", expected " << element_text(c.type, expected.data() + first);
}

}  // namespace tca_test
