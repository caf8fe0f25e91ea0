// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU backend's level kernels (level_kernels.cu) as the engine (engine_cuda.cu) launches
// them: what a step's kernels take, the words of the level's state in GPU memory, and one launch
// function per kernel. engine_cuda.h describes what they do together.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common.h"
#include "exchange.h"

namespace bfs {

constexpr int kThreads = 256;  // threads per block of the level kernels
// Arcs of a top-down chunk (one warp's work item): kChunkArcs, or kSmallChunkArcs in pipelined
// levels whose frontier has fewer than kSmallChunkMaxArcs arcs (a warp then takes its chunk in one
// round, and a frontier of a few vertices with thousands of arcs is spread over more warps; on
// 4 H200s at scale 24 that took a level from 26.5 to 20.3 us, while larger frontiers lost 5%).
constexpr uint64_t kChunkArcs = 256;
constexpr uint64_t kSmallChunkArcs = 32;
constexpr uint64_t kSmallChunkMaxArcs = 1 << 18;  // about one chunk per warp a GPU holds

// scalars_ words. The level loop's state (pipelined levels) from kDirection on: the direction
// of the level being run, whether the search is done, the frontier the level starts from (its
// vertices and arcs), the frontier before it, the arcs not yet explored, and the count of
// pipelined graphs run. Then the GPU's clock (globaltimer_ns) at three points of the pipelined
// level being run: the start of its gather (of the search's levels at the first level, which
// gathers nothing), the start of its step, and the end of its step (the latest block's end).
enum Scalar {
  kChunkCount = 0,
  kLevel = 1,
  kTupleEnds = 2,  // and 3 (add_counts writes two words)
  kDirection = 4,
  kDone = 5,
  kFrontier = 6,
  kPrevious = 7,
  kFrontierArcs = 8,
  kUnexplored = 9,
  kSequence = 10,
  kStarted = 11,
  kStepping = 12,
  kStepped = 13,
  kInput = 14,      // pushed frontiers: the bitmap the level reads (the next: + 1, mod 3)
  kPublished = 15,  // pushed frontiers: the end of the level's stores into the peers' copies
  kRoot = 16,       // pipelined levels: the search's root, its index on this rank (-1 elsewhere),
  kLocalRoot = 17,  // its degree and the arcs left to explore after it, as the host set them
  kRootDegree = 18,
  kUnexploredAtStart = 19,
  kScalars = 20
};

// A region a search starts over: `words` 32-bit words at `data` (4-byte aligned), each set to
// `pattern`.
struct Fill {
  uint32_t* data = nullptr;
  uint64_t words = 0;
  uint32_t pattern = 0;
};

// Pipelined levels: what the first node of a search's first level does before the level's
// state is set: the regions filled (visited bits, parents, levels, the frontier the level reads),
// and the search's root and start taken from `start` (mapped host memory: root, local root, root
// degree, unexplored arcs) into the scalars kRoot .. kUnexploredAtStart.
constexpr int kStartFills = 4;
struct SearchStart {
  Fill fills[kStartFills];
  const volatile long long* start = nullptr;
};

// The direction heuristic's parameters, as the GPU's kernels take them.
struct Heuristic {
  double alpha = 0, beta = 0;
  int mode = 0;  // DirectionMode
  uint64_t vertices = 0;
  bool operator==(const Heuristic& o) const {
    return alpha == o.alpha && beta == o.beta && mode == o.mode && vertices == o.vertices;
  }
};

struct StepArgs {
  const uint64_t* row_offsets;  // the graph's rows (local vertices)
  const vertex_t* columns;
  const uint64_t* td_offsets;  // the top-down index (global vertex -> local neighbours)
  const vertex_t* td_columns;
  const uint32_t* frontier;  // the gathered frontier, all ranks
  uint32_t* next;            // this rank's block of the next frontier
  uint32_t* visited;         // this rank's vertices
  int64_t* parents;          // this rank's blocks of the tree
  int32_t* levels;
  unsigned long long* counts;  // the level's new vertices and their arcs
  uint64_t* chunks;            // top-down work items
  unsigned long long* scalars;
  uint64_t local_vertices;
  uint64_t words;         // 32-bit words of this rank's block
  uint64_t global_words;  // 32-bit words of the gathered frontier
  bool gated;             // pipelined levels: the kernels run only in the direction the GPU chose
  // Pushed frontiers (pipelined levels, exchange.h): the level reads bitmap scalars[kInput] and
  // writes its block of the next one into every rank's copy; frontier and next are then unused.
  bool pushed;
  int rank, ranks;
  uint32_t* buffers[kPushedBuffers];  // this rank's copies
  uint32_t* const* views;             // every rank's copies, [b * ranks + r]
  unsigned* blocks_done;              // publish_kernel's blocks that have stored (0 between)
  uint64_t chunk_capacity;            // entries of the chunk table
};

// Launches, in `stream`; `early`: the kernel may start while the one before it runs
// (TCA_BFS_EARLY). Each checks the launch.
// The start of a level called by the host: counts and chunk table empty, the level moved on.
void launch_prepare(const StepArgs& a, bool advance, bool early, cudaStream_t stream);
// The search's root in frontier 0, and in the tree on its owner (local_root >= 0).
void launch_root(uint32_t* frontier, vertex_t root, int64_t local_root, int64_t* parents,
                 int32_t* levels, uint32_t* visited, unsigned long long* scalars,
                 cudaStream_t stream);
// Pipelined levels: the search's start (the level's start stamped, the regions filled, the
// root read), then the state of its first level with the root set; the end of a level (after the
// counts' allreduce) that tells the host at `slot`; the pushed frontier's stores.
void launch_start(const SearchStart& s, unsigned long long* scalars, cudaStream_t stream);
void launch_init(const StepArgs& a, const Heuristic& h, cudaStream_t stream);
void launch_finish(const long long* sums, unsigned long long* counts, unsigned long long* scalars,
                   long long* slot, const Heuristic& h, bool pushed, bool early,
                   cudaStream_t stream);
void launch_publish(const StepArgs& a, bool early, cudaStream_t stream);
// A step's kernels: bottom-up with `lanes` lanes per vertex (1, 2, 4, 8, 16 or 32), top-down.
void launch_bottom_up_lanes(int lanes, const StepArgs& a, bool early, cudaStream_t stream);
void launch_top_down(const StepArgs& a, bool early, cudaStream_t stream);
// The sum over this rank's reached vertices of their tuple ends, added at sum[0].
void launch_tuple_ends(const int64_t* parents, const uint32_t* tuple_ends, uint64_t count,
                       unsigned long long* sum, cudaStream_t stream);

}  // namespace bfs
