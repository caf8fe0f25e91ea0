// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The seeds' communication patterns as jobs: ping-pong, the four allgather and allreduce
// algorithms of the CG slides (ring, neighbor exchange, recursive doubling, dissemination),
// and the per-iteration communication of BFS and CG from the PEACH3 paper's Tables 2 and 3.
#pragma once

#include <string>
#include <vector>

#include "job.h"

namespace tca_sim {

// `iterations` round trips of `bytes` between ranks 0 and 1; the time of one is the job's
// makespan / iterations (half of it: the one-way latency).
Job pingpong(double bytes, MemKind kind, int iterations, Op op = Op::kDma);

enum class Algorithm { kRing, kNeighborExchange, kRecursiveDoubling, kDissemination };
const std::vector<Algorithm>& all_algorithms();
const char* algorithm_name(Algorithm algorithm);
Algorithm parse_algorithm(const std::string& name);

// The steps of one collective appended to every rank's program: an allgather of `total`
// bytes (total / ranks from each) or an allreduce of `bytes` (every step sends `bytes`).
// `order` lists the ranks in the algorithm's order (the node-mapping optimization permutes
// it); empty: 0..ranks-1. Neighbor exchange needs an even count; recursive doubling a power of
// two.
void append_allgather(std::vector<Program>& ranks, Algorithm algorithm, double total, MemKind kind,
                      const std::vector<int>& order, int first_slot);
void append_allreduce(std::vector<Program>& ranks, Algorithm algorithm, double bytes, MemKind kind,
                      const std::vector<int>& order, int first_slot);

// One collective between a barrier and the phase "coll" on every rank.
Job collective_job(bool allgather, Algorithm algorithm, double bytes, MemKind kind, int ranks,
                   const std::vector<int>& order);

// The recursive-doubling order of the CG slides for a 2^a x 2^b torus: each step's pairs are
// equally far apart and the last (largest) step is between neighbours.
std::vector<int> optimized_order(const std::vector<int>& dims, int ranks);

// Nodes of a 2 x (ranks/2) block of a 2 x N double ring (nodes numbered ring * N + position), in
// the order of a cycle through it (every neighbour one hop): the placement of 2-2N ranks.
std::vector<int> snake_placement(int ring, int ranks);
// optimized_order of the 2 x (ranks/2) block, as nodes of the 2 x `ring` double ring.
std::vector<int> optimized_placement(int ring, int ranks);

// BFS (Table 2): per level COMM.FLAG (4 B allreduce), COMM.OUT (allgather of 4|V|/|P| from each),
// once COMM.TREE (8|V|/|P| from each to rank 0); `levels` levels, |V| = 2^scale.
Job bfs_job(int ranks, int scale, int levels);
// CG (Table 3): per iteration SPMV and EXCH (8N/|P| B, sqrt|P| times), DOT (8 B, sqrt|P| times).
Job cg_job(int ranks, double n, int iterations);

}  // namespace tca_sim
