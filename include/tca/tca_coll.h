// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/*
 * tca collectives: allgather and allreduce built on the public tca API only (tca.h).
 *
 * A persistent collective (tcaCollNew) is made once for a size and a pair of buffers: it
 * registers the buffers, allocates its scratch space with tcaMalloc, exchanges the handles
 * and prebuilds one DMA chain per step. An iteration (tcaCollStart ... tcaCollWait) then pays
 * only kicks, notification waits and the local reductions. tcaAllreduce / tcaAllgather are
 * one-shot calls that keep such objects in a small cache.
 *
 * The four algorithms of the TCA papers (ring, neighbor exchange, recursive doubling,
 * dissemination) and a one-step direct exchange for fully connected fabrics, each for any
 * number of ranks, or TCA_COLL_AUTO, which picks one by size and rank count from measurements
 * (docs/COLLECTIVES.md has the table; tcaCollChooseAlgorithm answers it).
 *
 * Reserved resources: collectives raise notification slots [TCA_COLL_FIRST_SLOT,
 * TCA_NOTIFY_SLOTS) and bind their chains to DMA channel TCA_COLL_CHANNEL; tca refuses both to
 * the application (tca.h: TCA_USER_NOTIFY_SLOTS, TCA_USER_DMA_CHANNELS). At most one collective is
 * in flight per process: tcaCollStart of one object after tcaCollStart of another needs the other's
 * tcaCollWait first. Every rank calls the collective calls in the same order, as with MPI.
 */
#ifndef TCA_TCA_COLL_H
#define TCA_TCA_COLL_H

#include "tca/tca.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collectives use notification slots [32, TCA_NOTIFY_SLOTS) and DMA channel 3. */
#define TCA_COLL_FIRST_SLOT TCA_USER_NOTIFY_SLOTS
#define TCA_COLL_CHANNEL TCA_USER_DMA_CHANNELS

typedef enum tcaDataType {
  TCA_INT32 = 0,
  TCA_INT64 = 1,
  TCA_FLOAT = 2,
  TCA_DOUBLE = 3
} tcaDataType;

typedef enum tcaRedOp { TCA_SUM = 0, TCA_MAX = 1, TCA_MIN = 2 } tcaRedOp;

typedef enum tcaCollKind { TCA_COLL_ALLGATHER = 0, TCA_COLL_ALLREDUCE = 1 } tcaCollKind;

typedef enum tcaCollAlgorithm {
  TCA_COLL_AUTO = 0,               /* chosen by size and rank count (tcaCollChooseAlgorithm) */
  TCA_COLL_RING = 1,               /* n-1 steps to the next rank; allreduce: reduce-scatter
                                      then allgather of the reduced chunks */
  TCA_COLL_NEIGHBOR_EXCHANGE = 2,  /* n/2 steps, alternating neighbours; allreduce: ring
                                      reduce-scatter, then this allgather. Needs an even rank
                                      count: with an odd one the ring runs instead */
  TCA_COLL_RECURSIVE_DOUBLING = 3, /* log2 steps with partner rank^2^i; other rank counts
                                      fold the extra ranks in before and out after */
  TCA_COLL_DISSEMINATION = 4,      /* ceil(log2 n) steps to rank-2^i (Bruck allgather);
                                      allreduce gathers every contribution this way, then
                                      reduces them locally in rank order */
  TCA_COLL_DIRECT = 5              /* one step: every rank writes its block to every other
                                      rank (allreduce: chunk p of its vector to rank p, which
                                      reduces its chunk and writes the result to every rank:
                                      two steps, the ring's data); for switched / all-to-all
                                      links */
} tcaCollAlgorithm;
#define TCA_COLL_ALGORITHMS 6

/* How ranks are wired, for the rank-to-position mapping (tcaCollMapPositions). Rank r sits at
 * place r of the ring, or at (x, y) = (r % dims[0], r / dims[0]) of the torus. */
typedef enum tcaTopologyKind {
  TCA_TOPOLOGY_NONE = 0, /* as the transports report; tca.h reports none yet: flat */
  TCA_TOPOLOGY_FLAT = 1, /* every pair equally close */
  TCA_TOPOLOGY_RING = 2,
  TCA_TOPOLOGY_TORUS_2D = 3 /* dims[0] x dims[1] ranks, wrapping in both dimensions */
} tcaTopologyKind;

/* A team: an ordered subset of the job's ranks that collectives can span (docs/TEAMS.md).
 * TCA_TEAM_WORLD is every rank, team rank = world rank; TCA_TEAM_INVALID is the team of a rank
 * that joins none. A team value is local to the process that made it. */
typedef int tcaTeam;
#define TCA_TEAM_WORLD 0
#define TCA_TEAM_INVALID (-1)
#define TCA_COLL_RESIDENT_OFF 0xFFFFFFFFu /* tcaCollConfig.resident_idle_us: no resident kernel */
#define TCA_TEAM_NO_COLOR (-1)            /* tcaTeamSplit: this rank joins no team */

typedef struct tcaCollTopology {
  tcaTopologyKind kind;
  int dims[2]; /* TCA_TOPOLOGY_TORUS_2D only */
} tcaCollTopology;

/* Options of a collective; all-zero (or a NULL pointer) means: automatic algorithm, buffers
 * in host memory, topology as the transports report. */
typedef struct tcaCollConfig {
  tcaCollAlgorithm algorithm;
  tcaMemKind memory; /* where sendbuf and recvbuf live */
  tcaCollTopology topology;
  /* GPU memory only. Host-called iterations (tcaCollStart) of a collective that runs in one
   * block (results up to 4 KiB) are served by a kernel that stays on the GPU, woken by a store
   * to host memory, instead of a kernel launch per call: a few microseconds less per call. It
   * leaves once it has been idle this long (microseconds, at most 1000000), so until then
   * cudaDeviceSynchronize (and cudaFree, which synchronizes the device) waits for it.
   * 0: the setting TCA_COLL_RESIDENT_US (default 200; 0 there: a launch per call);
   * TCA_COLL_RESIDENT_OFF: a launch per call for this object. */
  unsigned resident_idle_us;
  /* The ranks that take part (every one of them calls), ranks counted within the team;
   * 0: TCA_TEAM_WORLD. */
  tcaTeam team;
} tcaCollConfig;

typedef struct tcaColl_st* tcaColl;

/* ---- persistent collectives ----
 * Allreduce: recvbuf[i] = op over ranks of sendbuf[i], i < count; in place when
 *   sendbuf == recvbuf.
 * Allgather: count elements per rank; recvbuf holds size*count, rank r's at r*count; in place
 *   when sendbuf == recvbuf + rank*count elements. `op` is ignored.
 * Buffers from tcaMalloc give single-copy transfers between ranks of one host; other host
 * memory works too (through the transport's path for unmapped memory). The object registers
 * the buffers itself. Collective: every rank passes the same kind, type, op, count and config. */
TCA_API tcaResult tcaCollNew(tcaColl* coll, tcaCollKind kind, tcaDataType type, tcaRedOp op,
                             size_t count, const void* sendbuf, void* recvbuf,
                             const tcaCollConfig* config);
/* Begins an iteration: sendbuf must hold this iteration's data; recvbuf is the collective's
 * until tcaCollWait (or a tcaCollTest that reports done) returns. */
TCA_API tcaResult tcaCollStart(tcaColl coll);
/* Advances the iteration without blocking; *done = 1 once it is complete (as tcaCollWait). */
TCA_API tcaResult tcaCollTest(tcaColl coll, int* done);
/* Completes the iteration: the result is in recvbuf and sendbuf may be changed. */
TCA_API tcaResult tcaCollWait(tcaColl coll);
/* Collective (waits for every rank): releases the chains, scratch space and registrations. */
TCA_API tcaResult tcaCollFree(tcaColl coll);
/* The algorithm the object runs: TCA_COLL_AUTO resolved, odd-rank fallback applied. */
TCA_API tcaResult tcaCollGetAlgorithm(tcaColl coll, tcaCollAlgorithm* algorithm);

/* ---- one-shot calls (collective) ----
 * Same arguments and in-place rules as tcaCollNew. Each runs a cached persistent collective
 * on internal buffers (copying in and out), so repeated calls of one shape pay no set-up. */
TCA_API tcaResult tcaAllreduce(const void* sendbuf, void* recvbuf, size_t count, tcaDataType type,
                               tcaRedOp op, const tcaCollConfig* config);
TCA_API tcaResult tcaAllgather(const void* sendbuf, void* recvbuf, size_t count, tcaDataType type,
                               const tcaCollConfig* config);
/* Collective over the teams the one-shot calls ran on (each team's members call it; a rank that
 * ran none returns at once): frees what they keep (tcaFinalize frees their memory too). */
TCA_API tcaResult tcaCollReleaseCache(void);

/* ---- teams (docs/TEAMS.md) ----
 * Control exchanges of teams travel over the transports (a chained write and a notification on
 * slot TCA_TEAM_SLOT per pair of ranks), not over the bootstrap, so they go on after any rank's
 * death, rank 0's included. Two ranks make the team calls they share in the same order. */
#define TCA_TEAM_SLOT (TCA_NOTIFY_SLOTS - 1)
/* Collective over `parent`: the ranks of one `color` (>= 0) form a team, ordered by `key`, then by
 * rank in `parent`; TCA_TEAM_NO_COLOR gives *team = TCA_TEAM_INVALID. */
TCA_API tcaResult tcaTeamSplit(tcaTeam parent, int color, int key, tcaTeam* team);
/* Collective over `parent`, every rank passing the same list: a team of `count` distinct ranks
 * of the job (world ranks, each a member of parent), team rank i = world_ranks[i]. Ranks not
 * in the list get TCA_TEAM_INVALID. */
TCA_API tcaResult tcaTeamCreate(tcaTeam parent, int count, const int* world_ranks, tcaTeam* team);
TCA_API tcaResult tcaTeamRank(tcaTeam team, int* rank); /* this rank's place in the team */
TCA_API tcaResult tcaTeamSize(tcaTeam team, int* size);
/* `rank` of team `from` as a rank of team `to` (either may be TCA_TEAM_WORLD); *to_rank = -1
 * where that rank is not a member of `to`. Local. */
TCA_API tcaResult tcaTeamTranslateRank(tcaTeam from, int rank, tcaTeam to, int* to_rank);
/* Collective over the team; for set-up, not for data ordering. */
TCA_API tcaResult tcaTeamBarrier(tcaTeam team);
/* Local: forgets the team (its collectives must be freed first). TCA_TEAM_WORLD stays. */
TCA_API tcaResult tcaTeamFree(tcaTeam team);
/* Collective over the live ranks of `team`, after some member failed (TCA_ERROR_PEER_FAILED or
 * TCA_ERROR_TIMEOUT): the survivors agree on who is alive, each wait bounded by twice tca's
 * timeout, and get the same new team of the live members in their old order. Notifications that
 * failed collectives left on the collectives' slots are dropped. A member that the others count
 * as dead gets TCA_ERROR_PEER_FAILED. */
TCA_API tcaResult tcaTeamShrink(tcaTeam team, tcaTeam* survivors);

/* ---- selection and mapping ---- */
/* What TCA_COLL_AUTO runs for `bytes` of result (allgather: all ranks' data together) on
 * `ranks` ranks with buffers in `memory` (the GPU programs and the host engine have tables of
 * their own). Local, no communication. */
TCA_API tcaResult tcaCollChooseAlgorithm(tcaCollKind kind, tcaMemKind memory, size_t bytes,
                                         int ranks, tcaCollAlgorithm* algorithm);
/* The logical order in which `algorithm` visits the ranks on `topology`: rank_at_position[p]
 * is the rank at position p (positions are what the algorithm's "rank" means). Flat: identity.
 * Ring and torus: rings follow the wires (a snake through the torus); recursive doubling on
 * 2^k ranks puts the partners of the last, largest step next to each other and gives every
 * pair of a step the same hop count. Local. */
TCA_API tcaResult tcaCollMapPositions(tcaCollAlgorithm algorithm, const tcaCollTopology* topology,
                                      int ranks, int* rank_at_position);
TCA_API const char* tcaCollAlgorithmName(tcaCollAlgorithm algorithm); /* "ring", ... */
TCA_API size_t tcaDataTypeSize(tcaDataType type);                     /* 0 if unknown */

#ifdef __cplusplus
}
#endif

#endif /* TCA_TCA_COLL_H */
