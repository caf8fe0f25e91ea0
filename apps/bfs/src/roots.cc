// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "roots.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "agree.h"
#include "control.h"
#include "rng.h"

namespace bfs {

std::vector<int64_t> global_degrees(const Partition& partition, int rank,
                                    const std::vector<vertex_t>& vertices,
                                    const LocalDegrees& degrees) {
  std::vector<uint64_t> local;
  std::vector<size_t> where;
  for (size_t i = 0; i < vertices.size(); ++i)
    if (partition.owner(vertices[i]) == rank) {
      local.push_back(vertices[i] - partition.first(rank));
      where.push_back(i);
    }
  std::vector<int64_t> mine(local.size(), 0);
  if (!local.empty()) degrees(local, mine);
  std::vector<int64_t> all(vertices.size(), 0);
  for (size_t i = 0; i < where.size(); ++i) all[where[i]] = mine[i];
  tca_apps::allreduce_in_place(all.data(), all.size(), tca_apps::Op::kSum);
  return all;
}

std::vector<SearchKey> sample_keys(const Partition& partition, int rank, uint64_t seed, int count,
                                   const LocalDegrees& degrees) {
  constexpr uint64_t kBatch = 256;
  const uint64_t n = partition.vertices();
  const FeistelPermutation candidates(n, derive_key(seed, 4));
  std::vector<SearchKey> keys;
  for (uint64_t next = 0; next < n && keys.size() < static_cast<size_t>(count); next += kBatch) {
    std::vector<vertex_t> batch;
    for (uint64_t k = next; k < std::min(n, next + kBatch); ++k)
      batch.push_back(static_cast<vertex_t>(candidates(k)));
    const std::vector<int64_t> degree = global_degrees(partition, rank, batch, degrees);
    for (size_t i = 0; i < batch.size() && keys.size() < static_cast<size_t>(count); ++i)
      if (degree[i] > 0) keys.push_back(SearchKey{batch[i], degree[i]});
  }
  return keys;
}

std::vector<int64_t> read_roots_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open --roots file " + path);
  std::vector<int64_t> roots;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    long long id = 0;
    std::string extra;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!(fields >> id) || (fields >> extra))
      throw Error(path + ":" + std::to_string(number) + ": '" + line + "' is not one vertex id");
    roots.push_back(id);
  }
  if (roots.empty()) throw Error(path + ": no vertex ids in the --roots file");
  return roots;
}

std::vector<SearchKey> given_keys(const Partition& partition, int rank,
                                  const std::vector<int64_t>& roots, const std::string& roots_file,
                                  const LocalDegrees& degrees) {
  std::vector<int64_t> ids = roots;
  collectively([&] {
    if (!roots_file.empty()) {
      const std::vector<int64_t> listed = read_roots_file(roots_file);
      ids.insert(ids.end(), listed.begin(), listed.end());
    }
    for (const int64_t id : ids)
      if (id < 0 || static_cast<uint64_t>(id) >= partition.vertices())
        throw Error("search key " + std::to_string(id) + " is not a vertex (the graph has " +
                    std::to_string(partition.vertices()) + ")");
  });
  std::vector<vertex_t> vertices(ids.begin(), ids.end());
  const std::vector<int64_t> degree = global_degrees(partition, rank, vertices, degrees);
  std::vector<SearchKey> keys;
  collectively([&] {
    for (size_t i = 0; i < vertices.size(); ++i) {
      if (degree[i] == 0)
        throw Error("search key " + std::to_string(vertices[i]) +
                    " has degree 0 (not counting self-loops): the specification searches only "
                    "from vertices joined to another");
      keys.push_back(SearchKey{vertices[i], degree[i]});
    }
  });
  return keys;
}

}  // namespace bfs
