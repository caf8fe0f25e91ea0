// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The communication of a CG run: the exchange of the SpMV's input vector, the 2d reduction of
// partial products, and the allreduce of dot products, over one of three libraries:
//
//   tca   persistent tca collectives (allgather, allreduce) made once, and for 2d tca chains
//         built once (notification slots 0-1, DMA channels 0-1; the collectives keep 32-63
//         and channel 3). On the GPU everything is stream-ordered and can be captured in a
//         CUDA graph. On the GPU, --tca-exchange push replaces both by kernels that store into
//         the peers' buffers through tca's device pointers (tca_push.h).
//   mpi   MPI collectives (MPI_Allgather, MPI_Sendrecv + MPI_Allgather on grid columns,
//         MPI_Reduce_scatter_block on grid rows, MPI_Allreduce); GPU data is staged through
//         host memory (MPI is not CUDA-aware here).
//   nccl  NCCL loaded at run time (GPU only): ncclAllGather / ncclAllReduce, and grouped
//         ncclSend / ncclRecv for the 2d exchanges; stream-ordered, capturable.
//
// A single rank needs no communication: every operation is empty there (the engine aliases
// the buffers), whatever the library.
#pragma once

#include <memory>
#include <string>

#include "engine.h"
#include "layout.h"

namespace tca_cg {

enum class CommKind { kTca, kMpi, kNccl };
const char* comm_name(CommKind kind);

// How --comm tca moves data on the GPU: tca's persistent collectives and chains (kColl);
// kernels that store straight into the peers' buffers through tca's device pointers, and a
// mailbox kernel for the dot products (kPush, tca_push.h); kPush with each dot product summed
// over the ranks by the last block of the kernel that forms it (kFusedDots: no allreduce
// kernels); kFusedDots with p's elements also stored into the peers by the update of p, and the
// SpMV waiting for the peers' before it reads them, and in 2d w's pieces stored into the grid
// row's scratch by the SpMV's slab sum, the sum of the pieces waiting for the peers' (kFused,
// with the slab SpMV kernels: no exchange kernel either). kTeams (2d, CPU or GPU): the 2d
// partition's exchanges as collectives over row and column teams of the rank grid (tcaTeamSplit):
// the partial products summed by an allreduce over the grid row, p's pieces swapped with the
// transposed rank, then gathered by an allgather over the grid column. The CPU takes kColl or
// kTeams.
enum class TcaExchange { kColl, kPush, kFusedDots, kFused, kTeams };
const char* tca_exchange_name(TcaExchange exchange);

struct CommOptions {
  int tca_algorithm = 0;  // tcaCollAlgorithm of the tca collectives (0: TCA_COLL_AUTO)
  TcaExchange tca_exchange = TcaExchange::kColl;
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual CommKind kind() const = 0;
  // Memory for the engine's communicated buffers (tca: tcaMalloc, registered for transfers).
  virtual Allocator allocator(Device device) = 0;
  // Pieces of scratch the 2d reduction needs in the engine (0: none).
  virtual int scratch_pieces(const Layout& layout) const = 0;
  // Builds what the exchanges need on the engine's buffers (collective).
  virtual void bind(Engine& engine) = 0;
  // Whether every operation only enqueues on the engine's stream (CUDA graph capture).
  virtual bool stream_ordered() const = 0;

  virtual void gather_p() = 0;  // p -> p_full (1d allgather; 2d pieces along grid columns)
  // w -> q (2d: sum along grid rows; 1d: nothing). With fuse_dot, where the engine's
  // sum_pieces forms q it also forms kDotLocal = p.q: returns whether it did.
  virtual bool reduce_w(bool fuse_dot) = 0;
  // scalars[local .. local+count) summed over ranks into their global twins.
  virtual void allreduce(Scalar local, int count) = 0;
  // What the exchanges run, for the report ("" where there is nothing to say).
  virtual std::string describe() const { return ""; }
  // tca: the exchange that runs after bind (one asked for may not be possible here).
  virtual TcaExchange tca_exchange() const { return TcaExchange::kColl; }
};

// Communication for `layout` (ranks > 1) over `kind`; a single rank gets the empty one.
// tca must have been initialized (tcaInit) for kTca; MPI for the others. nullptr with
// *why_not set where the library cannot run here (NCCL missing or refusing the job).
std::unique_ptr<Comm> make_comm(CommKind kind, const Layout& layout, Device device,
                                const CommOptions& options, std::string* why_not);

std::unique_ptr<Comm> make_self_comm(CommKind kind);
std::unique_ptr<Comm> make_mpi_comm(const Layout& layout);
std::unique_ptr<Comm> make_tca_comm(const Layout& layout, Device device,
                                    const CommOptions& options);
// Collective; nullptr and *why_not (the same on every rank) where NCCL cannot run here. The
// NCCL communicator is made once per run and shared by every NCCL comm.
std::unique_ptr<Comm> make_nccl_comm(const Layout& layout, std::string* why_not);
// Frees what comms keep from one configuration to the next (the NCCL communicator); before
// MPI_Finalize, once no comm is left.
void release_shared_comms();

// Plain host memory (64-byte aligned) and plain GPU memory (throws without CUDA).
Allocator host_allocator();
Allocator gpu_allocator();

}  // namespace tca_cg
