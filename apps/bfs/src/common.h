// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Types and helpers shared by every part of tca-bfs, host and device code alike.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#define BFS_HD __host__ __device__ __forceinline__
#else
#define BFS_HD inline
#endif

namespace bfs {

// Vertex ids inside the program (global ids, and local indices on a rank). The graph may have
// at most 2^32 vertices; input tuples keep 64-bit ids (the specification's 48 bits and more).
using vertex_t = uint32_t;

// One input tuple <StartVertex, EndVertex>, as the generator and the edge files give it.
struct Edge {
  int64_t u;
  int64_t v;
};

// A failure, with a message for the user.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A failure every rank throws at the same point with the same message (agree.h), so that all
// ranks can leave together; any other Error ends the job (one rank may be inside a collective).
class AgreedError : public Error {
 public:
  explicit AgreedError(const std::string& what) : Error(what) {}
};

// The direction of one BFS level.
enum class Direction { kTopDown = 0, kBottomUp = 1 };

}  // namespace bfs
