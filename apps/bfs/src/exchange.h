// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The communication of a search, one code for both compute backends.
//
// Three exchanges, as in the PEACH3 paper's BFS:
//  - COMM.OUT  (gather_frontier): every rank's block of the next frontier bitmap to every rank,
//              each level (an allgather, in place; where tca maps every peer's GPU memory, the
//              GPU engine's pipelined levels store it into the peers' copies themselves:
//              PushedFrontiers);
//  - COMM.FLAG (reduce_counts):   the level's "anything new?" flag, carried as two counts (new
//              vertices, their arcs; the direction heuristic needs both), summed over the
//              ranks and brought to the host, each level (an allreduce);
//  - COMM.TREE (gather_tree):     every rank's parents and levels to every rank, once per
//              search (an allgather), for the validation and the parent file.
// The buffers live in host memory (CPU ranks) or GPU memory (GPU ranks) and are the engine's
// working arrays themselves: a rank's block of frontier(p), parents() and levels() is where its
// engine writes, so nothing is copied before an exchange. Set up once; a level only starts them.
//
// Implementations: tca (persistent tca collectives; GPU memory to GPU memory on GPU ranks),
// mpi (MPI collectives; GPU data staged through host memory), nccl (GPU ranks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "partition.h"

namespace bfs {

enum class CommKind { kTca, kMpi, kNccl };
CommKind parse_comm(const std::string& name);  // throws Error naming the value
const char* comm_name(CommKind kind);

enum class Memory { kHost, kDevice };

struct Counts {
  int64_t vertices = 0;  // vertices that joined the tree in the level
  int64_t arcs = 0;      // the sum of their degrees
};
constexpr int kCountWords = 2;

class Exchange {
 public:
  virtual ~Exchange() = default;

  // Global bitmaps of partition.padded() bits; this rank's block starts at word
  // rank * per_rank / 64.
  uint64_t* frontier(int parity) const { return frontier_[parity]; }
  // kCountWords int64: this rank's counts of the level.
  int64_t* counts() const { return counts_; }
  // partition.padded() entries; this rank's block starts at rank * per_rank.
  int64_t* parents() const { return parents_; }
  int32_t* levels() const { return levels_; }

  virtual void gather_frontier(int parity) = 0;
  virtual Counts reduce_counts() = 0;  // the result is on the host when it returns
  virtual void gather_tree() = 0;      // GPU ranks: enqueued; the engine's synchronize waits

 protected:
  uint64_t* frontier_[2] = {nullptr, nullptr};
  int64_t* counts_ = nullptr;
  int64_t* parents_ = nullptr;
  int32_t* levels_ = nullptr;
};

// Frontiers that the level's kernels store straight into every rank's copy (tca's mappings of
// the peers' GPU memory), with no gather: kPushedBuffers global bitmaps (partition.padded()
// bits each) taken in turn. A level reads one, writes its block of the next into every copy and
// clears its own copy of the one after; every rank's write into a copy thus follows its owner's
// last read of it (which came before the owner's part in the counts' allreduce of the level
// before), and the clearing before the owner's part in the level's allreduce.
constexpr int kPushedBuffers = 3;
struct PushedFrontiers {
  int ranks = 0;
  uint32_t* local[kPushedBuffers] = {};  // this rank's copies
  // GPU memory, kPushedBuffers x ranks: rank r's copy of bitmap b, as this rank's kernels
  // address it, at [b * ranks + r] (this rank's own copies among them).
  uint32_t* const* views = nullptr;
};

// Exchanges of GPU ranks whose calls only enqueue work in the engine's stream (tca, nccl): a
// whole level, exchanges included, can then be captured in one CUDA graph.
class StreamOrdered {
 public:
  virtual ~StreamOrdered() = default;
  // Enqueues the counts' allreduce and the copy of the sums to host memory.
  virtual void enqueue_counts() = 0;
  // The sums, once the stream has reached the end of what enqueue_counts enqueued.
  virtual Counts host_sums() const = 0;

  // For levels whose direction the GPU chooses (the GPU engine's pipelined loop):
  // Enqueues the gather of frontier(parity), which does nothing where the word at `skip` (GPU
  // memory) is non-zero when it runs, if the exchange can skip it there (tca: the collective run
  // by a kernel of tca-bfs's, tca/tca_coll_device.cuh); else it always runs. Where
  // stamps_gather(), that kernel also writes the GPU's clock (%globaltimer, ns) at `started`
  // (GPU memory) when it starts.
  virtual void enqueue_gather(int parity, const unsigned long long* skip,
                              unsigned long long* started) = 0;
  // Whether enqueue_gather's work starts with a kernel of ours that writes `started`.
  virtual bool stamps_gather() const = 0;
  // Enqueues the counts' allreduce alone: the sums stay in GPU memory, at device_sums().
  virtual void enqueue_reduce() = 0;
  // kCountWords int64 in GPU memory: the summed counts once the allreduce has run.
  virtual const int64_t* device_sums() const = 0;
  // Frontiers the levels store into the peers' copies themselves (pipelined levels), where every
  // rank's kernels reach every rank's GPU memory; null (on every rank alike) where not.
  virtual const PushedFrontiers* pushed_frontiers() const { return nullptr; }
};

struct ExchangeSetup {
  int rank = 0;
  Partition partition;
  Memory memory = Memory::kHost;
  void* stream = nullptr;  // GPU ranks: the engine's cudaStream_t
};

// Collective. Returns nullptr, with `unavailable` saying why (the same on every rank), where
// the kind cannot run on these ranks (libnccl missing, tca's GPU path not reaching every peer);
// throws Error on failures.
std::unique_ptr<Exchange> make_exchange(CommKind kind, const ExchangeSetup& setup,
                                        std::string& unavailable);

// The host-memory implementations (exchange_host.cc) and the GPU ones (exchange_cuda.cc).
std::unique_ptr<Exchange> make_host_exchange(CommKind kind, const ExchangeSetup& setup);
std::unique_ptr<Exchange> make_device_exchange(CommKind kind, const ExchangeSetup& setup,
                                               std::string& unavailable);

}  // namespace bfs
