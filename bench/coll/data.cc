// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-coll's data: small integers, exact in every type, so results are compared exactly.
#include <algorithm>
#include <cstdint>

#include "coll.h"
#include "tca_harness/verify.h"

namespace tca_coll_bench {
namespace {

int64_t contribution(int rank, size_t i, int round) {
  return static_cast<int64_t>((rank * 37 + i * 11 + round * 23) % 101) - 40;
}

int64_t reduced(tcaRedOp op, size_t i, int round) {
  int64_t result = contribution(0, i, round);
  for (int r = 1; r < g_ranks; ++r) {
    const int64_t value = contribution(r, i, round);
    result = op == TCA_SUM   ? result + value
             : op == TCA_MAX ? std::max(result, value)
                             : std::min(result, value);
  }
  return result;
}

template <typename T>
void fill_typed(void* buffer, size_t count, int rank, int round) {
  T* values = static_cast<T*>(buffer);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(contribution(rank, i, round));
}

template <typename T, typename Expected>
size_t count_wrong_typed(const void* buffer, size_t count, Expected expected) {
  const T* values = static_cast<const T*>(buffer);
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += values[i] != static_cast<T>(expected(i));
  return wrong;
}

void fill(tcaDataType type, void* buffer, size_t count, int rank, int round) {
  switch (type) {
    case TCA_INT32:
      fill_typed<int32_t>(buffer, count, rank, round);
      break;
    case TCA_INT64:
      fill_typed<int64_t>(buffer, count, rank, round);
      break;
    case TCA_FLOAT:
      fill_typed<float>(buffer, count, rank, round);
      break;
    case TCA_DOUBLE:
      fill_typed<double>(buffer, count, rank, round);
      break;
  }
}

template <typename Expected>
size_t count_wrong(tcaDataType type, const void* buffer, size_t count, Expected expected) {
  switch (type) {
    case TCA_INT32:
      return count_wrong_typed<int32_t>(buffer, count, expected);
    case TCA_INT64:
      return count_wrong_typed<int64_t>(buffer, count, expected);
    case TCA_FLOAT:
      return count_wrong_typed<float>(buffer, count, expected);
    case TCA_DOUBLE:
      return count_wrong_typed<double>(buffer, count, expected);
  }
  return count;
}

}  // namespace

// Writes this rank's contribution of iteration `round` into the send buffer.
void fill_send(const Shape& shape, const Buffers& buffers, int round) {
  if (buffers.memory == TCA_MEM_GPU) {  // through the host copy
    fill(shape.type, buffers.host, shape.count, g_rank, round);
    tca_harness::upload_to_gpu(buffers.send, buffers.host, shape.send_bytes());
    return;
  }
  fill(shape.type, buffers.send, shape.count, g_rank, round);
}

// Elements of this rank's result that are wrong after iteration `round`.
size_t wrong_elements(const Shape& shape, const Buffers& buffers, int round) {
  const unsigned char* result = static_cast<const unsigned char*>(buffers.recv);
  if (buffers.memory == TCA_MEM_GPU) {
    tca_harness::download_from_gpu(buffers.host, buffers.recv, shape.result_bytes());
    result = buffers.host;
  }
  if (shape.kind == TCA_COLL_ALLREDUCE)
    return count_wrong(shape.type, result, shape.count,
                       [&](size_t i) { return reduced(shape.op, i, round); });
  size_t wrong = 0;
  for (int from = 0; from < g_ranks; ++from)
    wrong += count_wrong(shape.type, result + from * shape.send_bytes(), shape.count,
                         [&](size_t i) { return contribution(from, i, round); });
  return wrong;
}

}  // namespace tca_coll_bench
