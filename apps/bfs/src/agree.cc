// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "agree.h"

#include <vector>

#include "control.h"

namespace bfs {

std::string first_message(const std::string& text) {
  const int rank = tca_apps::rank(), size = tca_apps::size();
  const int first = tca_apps::allreduce<int32_t>(text.empty() ? size : rank, tca_apps::Op::kMin);
  if (first == size) return std::string();
  int length = rank == first ? static_cast<int>(text.size()) : 0;
  tca_apps::broadcast(&length, sizeof length, first);
  std::vector<char> bytes(text.begin(), text.end());
  bytes.resize(length);
  tca_apps::broadcast(bytes.data(), bytes.size(), first);
  return std::string(bytes.begin(), bytes.end());
}

void agree(const std::string& failure) {
  const std::string first = first_message(failure);
  if (!first.empty()) throw AgreedError(first);
}

}  // namespace bfs
