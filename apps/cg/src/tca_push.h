// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The GPU side of `--tca-exchange push`: kernels that store a rank's pieces straight into the
// peers' buffers through tca's device pointers and count their arrival in signal cells, and a
// mailbox allreduce of one or two doubles. Unlike a general collective, neither waits for the
// receiver's leave to write: the CG step already orders every write after the receiver's last
// read of the same buffer (each exchange of p is separated from the next by an allreduce whose
// values depend on the SpMV that read it), which saves the credit round trip of a collective
// writing into the user's buffer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tca_cg {

inline constexpr int kPushMaxPuts = 16;
inline constexpr int kPushMaxRanks = 32;  // the allreduce: one lane per rank
// Blocks of the push kernel.
inline constexpr int kPushBlocks = 132;
inline constexpr int kPushThreads = 512;

// One exchange: `puts` copies into (peer or own) memory; then the grid's last block raises each
// receiver's cell for this rank once and counts the push in `pushes`, and, with sources, holds
// the stream until every source's cell has reached that count (each rank pushes as often).
struct PushPlan {
  int puts = 0;
  double* dst[kPushMaxPuts] = {};
  const double* src[kPushMaxPuts] = {};
  int64_t count[kPushMaxPuts] = {};     // doubles
  uint64_t* signal[kPushMaxPuts] = {};  // the receiver's cell for this rank (its address here)
  int sources = 0;
  const uint64_t* arrived[kPushMaxPuts] = {};  // own cells, one per source
  unsigned* blocks_done = nullptr;             // own, 0 between launches
  uint64_t* pushes = nullptr;                  // own count of this exchange's pushes
  uint64_t timeout_ns = 0;                     // a wait longer than this traps (0: never)
};
void launch_push(const PushPlan& plan, cudaStream_t stream);

// --tca-exchange fused: the kernel that forms p (p = r + beta p) also stores every element
// into each peer's p_full (1d: every peer; 2d: the ranks of the grid column), and its last block
// raises their cells once and counts the push (the same cells and count as the exchange's push
// kernel, which still serves the other writers of p); the SpMV kernel waits (PushWait) before it
// reads x.
struct PushFusion {
  int peers = 0;
  double* dst[kPushMaxPuts] = {};       // each peer's p_full at this rank's piece
  double* dst_alt[kPushMaxPuts] = {};   // the same in each peer's second p_full (null: none)
  uint64_t* signal[kPushMaxPuts] = {};  // the peer's cell for this rank
  unsigned* blocks_done = nullptr;
  uint64_t* pushes = nullptr;
};
// --tca-exchange fused, 2d: the kernel that sums the SpMV's slabs into w also stores each row of
// another rank's piece into that rank's scratch (rows past the block's as zeros, as the push
// kernel copies whole pieces), and its last block raises the receivers' cells once and counts
// the push (the row reduction's cells and count); the sum of the pieces waits (PushWait) before
// it reads the scratch.
struct PieceFusion {
  int64_t piece = 0;               // rows of one piece (m)
  int pieces = 0;                  // pieces of w (the grid's size)
  double* dst[kPushMaxPuts] = {};  // piece k's receiver's scratch at this rank's slot; own: null
  int puts = 0;                    // receivers
  uint64_t* signal[kPushMaxPuts] = {};  // each receiver's cell for this rank
  unsigned* blocks_done = nullptr;
  uint64_t* pushes = nullptr;
};
// What a kernel that reads pushed data waits for: every source's cell at this rank's push count.
struct PushWait {
  int sources = 0;  // 0: nothing to wait for
  const uint64_t* arrived[kPushMaxPuts] = {};
  const uint64_t* pushes = nullptr;
  uint64_t timeout_ns = 0;
};

// Mailbox cells of an allreduce: 2 parities x ranks senders x 4 cells (two doubles, each as two
// 32-bit halves beside the message's sequence number).
inline constexpr int kMailboxCellsPerRank = 2 * 4;

struct ReducePlan {
  int ranks = 1;
  int rank = 0;
  uint64_t* mailbox[kPushMaxRanks] = {};  // every rank's mailbox (own too), as seen from here
  uint64_t* sequence = nullptr;           // own counter of allreduces run
  uint64_t timeout_ns = 0;
};
// Pipelined CG with --tca-exchange fused (1d): the pair a step's update forms is posted into
// every rank's pair mailbox (its own too) without a wait, and block 0 of the next step's SpMV
// collects it once its rows are done: the sum travels while the SpMV runs. A ReducePlan of its
// own (mailbox and count of posts), apart from the allreduces'. Posting pair k+2 needs every
// peer's k+1, which each posts only in the update after the SpMV that collected k: a message
// is never overwritten before it has been read.

// global[0..count) = the sum over ranks of local[0..count) (count 1 or 2), added in rank order
// on every rank, so every rank gets the same bits.
void launch_mailbox_allreduce(const ReducePlan& plan, const double* local, double* global,
                              int count, cudaStream_t stream);

}  // namespace tca_cg
