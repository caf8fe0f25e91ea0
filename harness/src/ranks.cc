// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "tca_harness/ranks.h"

#include <tca/tca.h>

#include <algorithm>
#include <cstring>

#include "tca_harness/check.h"

namespace tca_harness {

Control tca_control() {
  Control control;
  control.rank = job_rank();
  control.size = job_size();
  control.allgather = [](const void* mine, void* all, size_t bytes) {
    check(tcaBootstrapAllgather(mine, all, bytes), "tcaBootstrapAllgather");
  };
  control.broadcast = [](void* data, size_t bytes, int root) {
    check(tcaBootstrapBroadcast(data, bytes, root), "tcaBootstrapBroadcast");
  };
  return control;
}

int job_rank() {
  int rank = 0;
  check(tcaRank(&rank), "tcaRank");
  return rank;
}

int job_size() {
  int size = 0;
  check(tcaSize(&size), "tcaSize");
  return size;
}

void barrier() { check(tcaBarrier(), "tcaBarrier"); }

bool all_ranks(bool mine, const Control& control) {
  const uint8_t local = mine ? 1 : 0;
  std::vector<uint8_t> all(static_cast<size_t>(control.size));
  control.allgather(&local, all.data(), 1);
  return std::all_of(all.begin(), all.end(), [](uint8_t value) { return value != 0; });
}

bool all_ranks(bool mine) { return all_ranks(mine, tca_control()); }

std::string agreed_reason(const std::string& reason, const Control& control,
                          const std::string& elsewhere) {
  if (all_ranks(reason.empty(), control)) return "";
  return reason.empty() ? elsewhere : reason;
}

std::string agreed_reason(const std::string& reason, const std::string& elsewhere) {
  return agreed_reason(reason, tca_control(), elsewhere);
}

std::vector<std::vector<uint8_t>> allgather_bytes(const std::vector<uint8_t>& mine,
                                                  const Control& control) {
  const auto ranks = static_cast<size_t>(control.size);
  const uint64_t length = mine.size();
  std::vector<uint64_t> lengths(ranks);
  control.allgather(&length, lengths.data(), sizeof length);
  const size_t widest = std::max<size_t>(1, *std::max_element(lengths.begin(), lengths.end()));
  std::vector<uint8_t> padded(widest, 0);
  std::copy(mine.begin(), mine.end(), padded.begin());
  std::vector<uint8_t> all(widest * ranks);
  control.allgather(padded.data(), all.data(), widest);
  std::vector<std::vector<uint8_t>> out(ranks);
  for (size_t r = 0; r < ranks; ++r)
    out[r].assign(all.begin() + static_cast<std::ptrdiff_t>(r * widest),
                  all.begin() + static_cast<std::ptrdiff_t>(r * widest + lengths[r]));
  return out;
}

double max_over_ranks(double mine) {
  const std::vector<double> all = allgather_value(mine);
  return *std::max_element(all.begin(), all.end());
}

uint64_t sum_over_ranks(uint64_t mine) {
  uint64_t sum = 0;
  for (const uint64_t value : allgather_value(mine)) sum += value;
  return sum;
}

}  // namespace tca_harness
