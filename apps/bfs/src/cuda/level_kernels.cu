// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU backend's level kernels and their launches (level_kernels.h).
#include "cuda/cuda_util.h"
#include "cuda/level_kernels.h"
#include "direction.h"

namespace bfs {
namespace {

constexpr unsigned kFull = 0xFFFFFFFFu;

__device__ __forceinline__ uint64_t global_thread() {
  return blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ uint64_t global_threads() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

// Pushed frontiers: bitmap b of this rank's copies (b < kPushedBuffers; no dynamic indexing of a
// kernel's parameters).
__device__ __forceinline__ uint32_t* pushed_buffer(const StepArgs& a, unsigned long long b) {
  return b == 0 ? a.buffers[0] : b == 1 ? a.buffers[1] : a.buffers[2];
}
__device__ __forceinline__ unsigned long long buffer_after(unsigned long long b, int steps) {
  return (b + steps) % kPushedBuffers;
}
// The frontier the level reads, and this rank's block of the one it writes.
__device__ __forceinline__ const uint32_t* level_frontier(const StepArgs& a) {
  return a.pushed ? pushed_buffer(a, a.scalars[kInput]) : a.frontier;
}
__device__ __forceinline__ uint32_t* level_next(const StepArgs& a) {
  return a.pushed ? pushed_buffer(a, buffer_after(a.scalars[kInput], 1)) + a.rank * a.words
                  : a.next;
}

__device__ __forceinline__ bool in_bitmap(const uint32_t* bits, uint32_t v) {
  return (__ldg(bits + (v >> 5)) >> (v & 31)) & 1u;
}

__device__ __forceinline__ uint32_t valid_bits32(uint64_t word, uint64_t count) {
  const uint64_t first = word * 32;
  if (first >= count) return 0;
  const uint64_t left = count - first;
  return left >= 32 ? kFull : (1u << left) - 1;
}

// The arcs of a top-down chunk in this level. Pipelined levels know their frontier's vertices and
// arcs (over all ranks): a rank's chunks of the frontier number at most vertices + arcs / size.
__device__ __forceinline__ uint64_t chunk_arcs(const StepArgs& a) {
  if (!a.gated) return kChunkArcs;
  const uint64_t vertices = a.scalars[kFrontier], arcs = a.scalars[kFrontierArcs];
  return arcs < kSmallChunkMaxArcs && vertices + arcs / kSmallChunkArcs + 1 <= a.chunk_capacity
             ? kSmallChunkArcs
             : kChunkArcs;
}

// Pipelined levels: whether this direction's kernels sit out the level (the GPU chose the other
// direction, or the search is done). Every thread reads the same words, so whole grids leave.
__device__ __forceinline__ bool sits_out(const StepArgs& a, Direction direction) {
  return a.gated && (a.scalars[kDone] != 0 ||
                     a.scalars[kDirection] != static_cast<unsigned long long>(direction));
}

// Adds the block's counts to the level's (every thread of the block calls it once).
__device__ void add_counts(unsigned long long* counts, unsigned long long vertices,
                           unsigned long long arcs) {
  __shared__ unsigned long long partial[2][kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    vertices += __shfl_down_sync(kFull, vertices, offset);
    arcs += __shfl_down_sync(kFull, arcs, offset);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    partial[0][warp] = vertices;
    partial[1][warp] = arcs;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long v = 0, a = 0;
    for (int w = 0; w < kThreads / 32; ++w) {
      v += partial[0][w];
      a += partial[1][w];
    }
    if (v != 0) {
      atomicAdd(counts, v);
      atomicAdd(counts + 1, a);
    }
  }
}

// The start of a level: its counts and chunk table empty, its number moved on.
__global__ void prepare_kernel(unsigned long long* counts, unsigned long long* scalars,
                               bool advance) {
  tca_apps::begin_dependent_kernel();
  counts[0] = 0;
  counts[1] = 0;
  scalars[kChunkCount] = 0;
  if (advance) ++scalars[kLevel];
}

// The search's root in the frontier the first level reads, and in the tree on its owner
// (local_root >= 0: its index there).
__device__ void place_root(uint32_t* frontier, vertex_t root, int64_t local_root, int64_t* parents,
                           int32_t* levels, uint32_t* visited) {
  frontier[root >> 5] |= 1u << (root & 31);
  if (local_root < 0) return;
  parents[local_root] = static_cast<int64_t>(root);
  levels[local_root] = 0;
  visited[local_root >> 5] |= 1u << (local_root & 31);
}

// Pipelined levels, the first kernel of a search: stamps the start of the search's levels, takes
// the root and start from the host's words and sets every region back (16-byte stores where
// aligned, the words around them one by one), the whole grid striding over each region.
__global__ void start_kernel(SearchStart s, unsigned long long* scalars) {
  const uint64_t lane = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t lanes = gridDim.x * static_cast<uint64_t>(blockDim.x);
  if (lane == 0) {
    scalars[kStarted] = globaltimer_ns();
    for (int i = 0; i < 4; ++i) scalars[kRoot + i] = static_cast<unsigned long long>(s.start[i]);
  }
  for (int f = 0; f < kStartFills; ++f) {
    const Fill fill = s.fills[f];
    const uint64_t misaligned = (reinterpret_cast<uintptr_t>(fill.data) & 15) / 4;
    const uint64_t head =
        misaligned == 0 ? 0 : (4 - misaligned < fill.words ? 4 - misaligned : fill.words);
    const uint64_t units = (fill.words - head) / 4;
    const uint4 value = make_uint4(fill.pattern, fill.pattern, fill.pattern, fill.pattern);
    uint4* body = reinterpret_cast<uint4*>(fill.data + head);
    for (uint64_t i = lane; i < units; i += lanes) body[i] = value;
    const uint64_t tail = head + units * 4;
    if (lane < head) fill.data[lane] = fill.pattern;
    if (lane < fill.words - tail) fill.data[tail + lane] = fill.pattern;
  }
}

// Pipelined levels: the state of a search's first level (after start_kernel): the root in the
// frontier the level reads and in the tree on its owner, as root_kernel sets them. Pushed
// frontiers: the root also goes into this rank's copy of the bitmap the first level reads (empty
// on every rank between two searches).
__global__ void init_kernel(unsigned long long* counts, unsigned long long* scalars, Heuristic h,
                            StepArgs a) {
  tca_apps::begin_dependent_kernel();
  const vertex_t root = static_cast<vertex_t>(scalars[kRoot]);
  const long long local_root = static_cast<long long>(scalars[kLocalRoot]);
  const long long root_degree = static_cast<long long>(scalars[kRootDegree]);
  const long long unexplored = static_cast<long long>(scalars[kUnexploredAtStart]);
  place_root(const_cast<uint32_t*>(a.frontier), root, local_root, a.parents, a.levels, a.visited);
  if (a.pushed) pushed_buffer(a, scalars[kInput])[root >> 5] |= 1u << (root & 31);
  counts[0] = 0;
  counts[1] = 0;
  scalars[kChunkCount] = 0;
  scalars[kLevel] = 0;
  scalars[kDone] = 0;
  scalars[kFrontier] = 1;
  scalars[kPrevious] = 0;
  scalars[kFrontierArcs] = static_cast<unsigned long long>(root_degree);
  scalars[kUnexplored] = static_cast<unsigned long long>(unexplored);
  scalars[kDirection] = static_cast<unsigned long long>(
      next_direction(Direction::kTopDown, static_cast<DirectionMode>(h.mode), h.alpha, h.beta, 1, 0,
                     root_degree, unexplored, h.vertices));
}

// Pipelined levels: the end of a level, after the counts' allreduce. Tells the host what the
// level found and how it ran (slot: new vertices, their arcs, the level's direction, frontier and
// frontier arcs, the level's clock readings in ns: its start, its step's start and end, and its
// end (this kernel's), then the graph's sequence number last; pushed frontiers: the end of the
// stores into the peers at 10), then prepares the next level: done if nothing was new, else the
// heuristic's direction and the next level number; counts emptied. Pushed frontiers: a level
// run (the last one too) moves the bitmap read on to the one it wrote, which the last level left
// empty everywhere: the next search's first level reads it.
__global__ void finish_kernel(const long long* sums, unsigned long long* counts,
                              unsigned long long* scalars, volatile long long* slot, Heuristic h,
                              bool pushed) {
  tca_apps::begin_dependent_kernel();
  const long long found = sums[0], arcs = sums[1];
  const bool done = scalars[kDone] != 0 || found == 0;
  if (pushed && scalars[kDone] == 0) scalars[kInput] = buffer_after(scalars[kInput], 1);
  slot[10] = static_cast<long long>(scalars[kPublished]);
  slot[0] = done ? 0 : found;
  slot[1] = done ? 0 : arcs;
  slot[2] = static_cast<long long>(scalars[kDirection]);
  slot[3] = static_cast<long long>(scalars[kFrontier]);
  slot[4] = static_cast<long long>(scalars[kFrontierArcs]);
  slot[6] = static_cast<long long>(scalars[kStarted]);
  slot[7] = static_cast<long long>(scalars[kStepping]);
  slot[8] = static_cast<long long>(scalars[kStepped]);
  slot[9] = static_cast<long long>(globaltimer_ns());
  __threadfence_system();
  slot[5] = static_cast<long long>(++scalars[kSequence]);
  counts[0] = 0;
  counts[1] = 0;
  scalars[kChunkCount] = 0;
  if (done) {
    scalars[kDone] = 1;
    return;
  }
  const long long frontier = static_cast<long long>(scalars[kFrontier]);
  const long long unexplored = static_cast<long long>(scalars[kUnexplored]) - arcs;
  scalars[kPrevious] = static_cast<unsigned long long>(frontier);
  scalars[kFrontier] = static_cast<unsigned long long>(found);
  scalars[kFrontierArcs] = static_cast<unsigned long long>(arcs);
  scalars[kUnexplored] = static_cast<unsigned long long>(unexplored);
  scalars[kDirection] = static_cast<unsigned long long>(next_direction(
      static_cast<Direction>(scalars[kDirection]), static_cast<DirectionMode>(h.mode), h.alpha,
      h.beta, found, frontier, arcs, unexplored, h.vertices));
  ++scalars[kLevel];
}

// Pipelined levels: the bottom-up kernel is the step's last, so its blocks note when they end
// (scalars[kStepped] keeps the latest; the clock only moves on, so no level's reading is older
// than the level before's). Where it sits out only its last block notes it: every block returns
// at once, and the last one is scheduled last (one atomic per block would queue them).
__device__ __forceinline__ void note_step_end(const StepArgs& a) {
  if (a.gated && threadIdx.x == 0) atomicMax(a.scalars + kStepped, globaltimer_ns());
}

template <int kLanes>
__global__ void __launch_bounds__(kThreads) bottom_up_kernel(StepArgs a) {
  tca_apps::begin_dependent_kernel();
  if (sits_out(a, Direction::kBottomUp)) {
    if (blockIdx.x == gridDim.x - 1) note_step_end(a);
    return;
  }
  constexpr int kGroups = 32 / kLanes;
  const int lane = threadIdx.x & 31;
  const int group = lane / kLanes, member = lane % kLanes;
  const uint32_t group_bits = (kLanes == 32 ? kFull : ((1u << kLanes) - 1)) << (group * kLanes);
  const int level = static_cast<int>(a.scalars[kLevel]);
  const uint32_t* frontier = level_frontier(a);
  uint32_t* next = level_next(a);
  const uint64_t warp = global_thread() >> 5, warps = global_threads() >> 5;
  unsigned long long vertices = 0, arcs = 0;
  for (uint64_t word = warp; word < a.words; word += warps) {
    const uint32_t seen = a.visited[word];
    uint32_t unvisited = ~seen & valid_bits32(word, a.local_vertices);
    uint32_t found = 0;
    while (unvisited != 0) {
      // Group g takes the (g+1)-th unvisited vertex of the word.
      const int pending = __popc(unvisited);
      const int bit = group < pending ? static_cast<int>(__fns(unvisited, 0, group + 1)) : -1;
      for (int taken = 0; taken < kGroups && unvisited != 0; ++taken) unvisited &= unvisited - 1;
      const uint64_t w = word * 32 + (bit < 0 ? 0 : bit);
      const uint64_t begin = bit < 0 ? 0 : a.row_offsets[w];
      const uint64_t end = bit < 0 ? 0 : a.row_offsets[w + 1];
      uint64_t base = begin;
      bool searching = base < end, joins = false;
      uint32_t parent = 0;
      while (__any_sync(kFull, searching)) {
        bool hit = false;
        uint32_t u = 0;
        if (searching && base + member < end) {
          u = a.columns[base + member];
          hit = in_bitmap(frontier, u);
        }
        const uint32_t hits = __ballot_sync(kFull, hit) & group_bits;
        const uint32_t first = __shfl_sync(kFull, u, hits != 0 ? __ffs(hits) - 1 : lane);
        if (searching) {
          if (hits != 0) {
            parent = first;
            joins = member == 0;
            searching = false;
          } else {
            base += kLanes;
            searching = base < end;
          }
        }
      }
      if (joins) {
        a.parents[w] = parent;
        a.levels[w] = level + 1;
        ++vertices;
        arcs += end - begin;
      }
      found |= __reduce_or_sync(kFull, joins ? 1u << bit : 0u);
    }
    if (lane == 0) {
      next[word] = found;
      if (found != 0) a.visited[word] = seen | found;
    }
  }
  add_counts(a.counts, vertices, arcs);  // every thread of the block is done past its barrier
  note_step_end(a);
}

// The gathered frontier as chunks of at most kChunkArcs top-down arcs: (vertex << 32) | index.
// Pipelined levels also empty this rank's block of the next frontier here (top_down_kernel sets
// its bits; the levels called by the host clear it with a memset instead; a pushed next frontier
// is empty already). It is a pipelined step's first kernel: its block 0 notes the step's start
// (and, where the frontier was pushed, the level's: no gather comes first).
__global__ void __launch_bounds__(kThreads) chunk_kernel(StepArgs a) {
  tca_apps::begin_dependent_kernel();
  if (a.gated && blockIdx.x == 0 && threadIdx.x == 0) {
    const unsigned long long now = globaltimer_ns();
    a.scalars[kStepping] = now;
    if (a.pushed && a.scalars[kDone] == 0 && a.scalars[kLevel] != 0) a.scalars[kStarted] = now;
  }
  if (sits_out(a, Direction::kTopDown)) return;
  if (a.gated && !a.pushed)
    for (uint64_t i = global_thread(); i < a.words; i += global_threads()) a.next[i] = 0;
  const uint32_t* frontier = level_frontier(a);
  const uint64_t size = chunk_arcs(a);
  const int lane = threadIdx.x & 31;
  for (uint64_t base = global_thread() - lane; base < a.global_words; base += global_threads()) {
    const uint64_t word = base + lane;
    const uint32_t bits = word < a.global_words ? frontier[word] : 0;
    uint32_t mine = 0;
    for (uint32_t rest = bits; rest != 0; rest &= rest - 1) {
      const uint64_t u = word * 32 + (__ffs(rest) - 1);
      mine += static_cast<uint32_t>((a.td_offsets[u + 1] - a.td_offsets[u] + size - 1) / size);
    }
    uint32_t inclusive = mine;
    for (int offset = 1; offset < 32; offset *= 2) {
      const uint32_t before = __shfl_up_sync(kFull, inclusive, offset);
      if (lane >= offset) inclusive += before;
    }
    const uint32_t total = __shfl_sync(kFull, inclusive, 31);
    unsigned long long at = 0;
    if (lane == 0 && total > 0) at = atomicAdd(a.scalars + kChunkCount, total);
    at = __shfl_sync(kFull, at, 0) + (inclusive - mine);
    for (uint32_t rest = bits; rest != 0; rest &= rest - 1) {
      const uint64_t u = word * 32 + (__ffs(rest) - 1);
      const uint64_t chunks = (a.td_offsets[u + 1] - a.td_offsets[u] + size - 1) / size;
      // The table holds every chunk of a frontier (chunk_arcs); the test only keeps a wrong
      // count from writing past it (the search would then fail its validation).
      for (uint64_t k = 0; k < chunks && at < a.chunk_capacity; ++k) a.chunks[at++] = (u << 32) | k;
    }
  }
}

__global__ void __launch_bounds__(kThreads) top_down_kernel(StepArgs a) {
  tca_apps::begin_dependent_kernel();
  if (sits_out(a, Direction::kTopDown)) return;
  const int lane = threadIdx.x & 31;
  const int level = static_cast<int>(a.scalars[kLevel]);
  const uint64_t count = min(static_cast<uint64_t>(a.scalars[kChunkCount]), a.chunk_capacity);
  uint32_t* next = level_next(a);
  const uint64_t size = chunk_arcs(a);
  unsigned long long vertices = 0, arcs = 0;
  for (uint64_t c = global_thread() >> 5; c < count; c += global_threads() >> 5) {
    const uint64_t entry = a.chunks[c];
    const uint64_t u = entry >> 32;
    const uint64_t begin = a.td_offsets[u] + (entry & 0xFFFFFFFFu) * size;
    const uint64_t end = min(a.td_offsets[u + 1], begin + size);
    for (uint64_t i = begin + lane; i < end; i += 32) {
      const vertex_t w = a.td_columns[i];
      const uint32_t bit = 1u << (w & 31);
      if (*reinterpret_cast<volatile uint32_t*>(a.visited + (w >> 5)) & bit) continue;
      if (atomicOr(a.visited + (w >> 5), bit) & bit) continue;
      a.parents[w] = static_cast<int64_t>(u);
      a.levels[w] = level + 1;
      atomicOr(next + (w >> 5), bit);
      ++vertices;
      arcs += a.row_offsets[w + 1] - a.row_offsets[w];
    }
  }
  add_counts(a.counts, vertices, arcs);
}

__global__ void root_kernel(uint32_t* frontier, vertex_t root, int64_t local_root, int64_t* parents,
                            int32_t* levels, uint32_t* visited, unsigned long long* scalars) {
  tca_apps::begin_dependent_kernel();
  scalars[kLevel] = 0;
  place_root(frontier, root, local_root, parents, levels, visited);
}

// Pushed frontiers: the level's end of its step. Stores every non-empty 16 bytes of this rank's
// block of the next frontier into each peer's copy (the peers' copies of the block are empty:
// they were cleared before it was written), clears this rank's copy of the bitmap after the next
// (read two levels ago, written by the peers only after the level's counts' allreduce), and
// then, in the grid's last block, orders every block's stores before what follows in the stream
// (the counts' allreduce, whose arrival at the peers publishes them) and notes the time.
__global__ void __launch_bounds__(kThreads) publish_kernel(StepArgs a) {
  tca_apps::begin_dependent_kernel();
  if (a.scalars[kDone] != 0) return;
  const unsigned long long next = buffer_after(a.scalars[kInput], 1);
  const uint64_t first = static_cast<uint64_t>(a.rank) * a.words;  // 32-bit words
  const uint4* block = reinterpret_cast<const uint4*>(pushed_buffer(a, next) + first);
  const uint64_t groups = a.words / 4;  // a rank's block is whole 64-byte lines
  for (uint64_t i = global_thread(); i < groups; i += global_threads()) {
    const uint4 v = block[i];
    if ((v.x | v.y | v.z | v.w) == 0) continue;
    for (int r = 0; r < a.ranks; ++r) {
      if (r == a.rank) continue;
      uint4* copy = reinterpret_cast<uint4*>(a.views[next * a.ranks + r] + first);
      copy[i] = v;
    }
  }
  uint4* after = reinterpret_cast<uint4*>(pushed_buffer(a, buffer_after(next, 1)));
  for (uint64_t i = global_thread(); i < a.global_words / 4; i += global_threads())
    after[i] = make_uint4(0, 0, 0, 0);
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(a.blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence_system();  // every block's stores (they arrived before this one), then on
  *a.blocks_done = 0;
  a.scalars[kPublished] = globaltimer_ns();
}

__global__ void __launch_bounds__(kThreads)
    tuple_ends_kernel(const int64_t* parents, const uint32_t* tuple_ends, uint64_t count,
                      unsigned long long* sum) {
  unsigned long long mine = 0;
  for (uint64_t v = global_thread(); v < count; v += global_threads())
    if (parents[v] != -1) mine += tuple_ends[v];
  add_counts(sum, mine, 0);
}

template <int kLanes>
void launch_bottom_up(const StepArgs& a, bool early, cudaStream_t stream) {
  launch_kernel(early, "bottom_up_kernel", bottom_up_kernel<kLanes>,
                grid_for(a.words * 32, kThreads), kThreads, stream, a);
}

}  // namespace

void launch_prepare(const StepArgs& a, bool advance, bool early, cudaStream_t stream) {
  launch_kernel(early, "prepare_kernel", prepare_kernel, 1, 1, stream, a.counts, a.scalars,
                advance);
}

void launch_root(uint32_t* frontier, vertex_t root, int64_t local_root, int64_t* parents,
                 int32_t* levels, uint32_t* visited, unsigned long long* scalars,
                 cudaStream_t stream) {
  root_kernel<<<1, 1, 0, stream>>>(frontier, root, local_root, parents, levels, visited, scalars);
  check_cuda(cudaGetLastError(), "root_kernel");
}

void launch_start(const SearchStart& s, unsigned long long* scalars, cudaStream_t stream) {
  constexpr unsigned kStartBlocks = 1024;  // one wave of kThreads-thread blocks on an H100 / H200
  start_kernel<<<kStartBlocks, kThreads, 0, stream>>>(s, scalars);
  check_cuda(cudaGetLastError(), "start_kernel");
}

void launch_init(const StepArgs& a, const Heuristic& h, cudaStream_t stream) {
  init_kernel<<<1, 1, 0, stream>>>(a.counts, a.scalars, h, a);
  check_cuda(cudaGetLastError(), "init_kernel");
}

void launch_finish(const long long* sums, unsigned long long* counts, unsigned long long* scalars,
                   long long* slot, const Heuristic& h, bool pushed, bool early,
                   cudaStream_t stream) {
  launch_kernel(early, "finish_kernel", finish_kernel, 1, 1, stream, sums, counts, scalars, slot, h,
                pushed);
}

void launch_publish(const StepArgs& a, bool early, cudaStream_t stream) {
  launch_kernel(early, "publish_kernel", publish_kernel, grid_for(a.global_words / 4, kThreads),
                kThreads, stream, a);
}

void launch_bottom_up_lanes(int lanes, const StepArgs& a, bool early, cudaStream_t stream) {
  switch (lanes) {
    case 1:
      launch_bottom_up<1>(a, early, stream);
      break;
    case 2:
      launch_bottom_up<2>(a, early, stream);
      break;
    case 8:
      launch_bottom_up<8>(a, early, stream);
      break;
    case 16:
      launch_bottom_up<16>(a, early, stream);
      break;
    case 32:
      launch_bottom_up<32>(a, early, stream);
      break;
    default:
      launch_bottom_up<4>(a, early, stream);
      break;
  }
}

void launch_top_down(const StepArgs& a, bool early, cudaStream_t stream) {
  const int grid = grid_for(SIZE_MAX / 2, kThreads);  // every multiprocessor: sizes are on the GPU
  launch_kernel(early, "chunk_kernel", chunk_kernel, grid_for(a.global_words, kThreads), kThreads,
                stream, a);
  launch_kernel(early, "top_down_kernel", top_down_kernel, grid, kThreads, stream, a);
}

void launch_tuple_ends(const int64_t* parents, const uint32_t* tuple_ends, uint64_t count,
                       unsigned long long* sum, cudaStream_t stream) {
  tuple_ends_kernel<<<grid_for(count, kThreads), kThreads, 0, stream>>>(parents, tuple_ends, count,
                                                                        sum);
  check_cuda(cudaGetLastError(), "tuple_ends_kernel");
}

}  // namespace bfs
