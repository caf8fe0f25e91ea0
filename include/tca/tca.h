// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/*
 * tca — Tightly Coupled Accelerators runtime, host API.
 *
 * The model follows the PEACH2/PEACH3 TCA API: memory is registered into one
 * global address space (tcaMalloc / tcaCreateHandle), handles are exchanged
 * among ranks, transfers are built once into chained DMA descriptors
 * (tcaDescNew / tcaDescSetMemcpy / tcaDescSetMemcpy2D / tcaDescSet) and then
 * only kicked (tcaStartDMADesc) every iteration; the receiver waits for a
 * notification (tcaWaitDMARecvDesc). PIO (direct stores into a peer's
 * region) and get (the hardware's proxy-write pseudo-read) complete it.
 *
 * Every call returns a tcaResult. On failure tcaGetLastErrorMessage() tells
 * what was wrong (which handle, which bound) and where it was detected.
 * Calls are not thread-safe: one thread at a time per process.
 */
#ifndef TCA_TCA_H
#define TCA_TCA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tca/tca_version.h" /* TCA_VERSION_MAJOR, _MINOR, _PATCH, _STRING (generated) */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TCA_API __attribute__((visibility("default")))
#else
#define TCA_API
#endif

typedef enum tcaResult {
  TCA_SUCCESS = 0,
  TCA_ERROR_INVALID_ARGUMENT, /* null pointer, zero size where not allowed, bad flag */
  TCA_ERROR_NOT_INITIALIZED,  /* call before tcaInit or after tcaFinalize */
  TCA_ERROR_ALREADY_INITIALIZED,
  TCA_ERROR_OUT_OF_MEMORY,
  TCA_ERROR_OUT_OF_RESOURCES, /* too many registered regions, descriptors, ... */
  TCA_ERROR_OUT_OF_BOUNDS,    /* offset/size outside a registered region */
  TCA_ERROR_SIZE_OVERFLOW,    /* offset + size (or a 2D extent) overflows */
  TCA_ERROR_INVALID_HANDLE,   /* handle bytes corrupted or forged */
  TCA_ERROR_FOREIGN_HANDLE,   /* handle made by another job */
  TCA_ERROR_FREED_HANDLE,     /* region was deregistered or freed */
  TCA_ERROR_INVALID_CHANNEL,  /* DMA channel outside [0, TCA_DMA_CHANNELS) */
  TCA_ERROR_INVALID_DESC,     /* null / freed descriptor, or kicked before tcaDescSet */
  TCA_ERROR_INVALID_RANK,
  TCA_ERROR_INVALID_SLOT, /* notification slot outside [0, TCA_NOTIFY_SLOTS) */
  TCA_ERROR_UNREACHABLE,  /* the requested path cannot reach that peer */
  TCA_ERROR_UNSUPPORTED,  /* e.g. a PIO pointer into memory that is not mapped */
  TCA_ERROR_TIMEOUT,      /* a wait outlived the configured timeout */
  TCA_ERROR_PEER_FAILED,  /* a peer process is gone */
  TCA_ERROR_TRANSPORT,    /* the system, MPI or CUDA reported a failure */
  TCA_ERROR_INTERNAL
} tcaResult;

typedef enum tcaMemKind {
  TCA_MEM_CPU = 0, /* host memory */
  TCA_MEM_GPU = 1  /* device memory of the rank's current GPU */
} tcaMemKind;

/* Which engine carries a descriptor's transfers. AUTO picks, per transfer, among the transports
 * that reach the peer for the memory kinds of its two ends: the first in the registry's order
 * (docs/ARCHITECTURE.md), or by size where a calibration measured several (tca-topo shows it). */
typedef enum tcaPath {
  TCA_PATH_AUTO = 0,
  TCA_PATH_SHM = 1,     /* CPU shared memory between ranks of one host */
  TCA_PATH_MPI = 2,     /* MPI one-sided (RMA windows) */
  TCA_PATH_CUDA = 3,    /* GPU engines of one host; copy engine or SM chosen per size */
  TCA_PATH_CUDA_CE = 4, /* GPU copy engines: the chain runs as a CUDA graph of memcpy nodes */
  TCA_PATH_CUDA_SM = 5, /* GPU multiprocessors: one kernel stores straight into peer memory */
  /* The SMs, with host kicks of chains up to 32 KiB served by a kernel that stays resident (no
   * launch per kick; it leaves after TCA_CUDA_RESIDENT_IDLE_US without one). Such kicks do not
   * follow the legacy default stream: synchronize with the work that wrote the source first. */
  TCA_PATH_CUDA_RESIDENT = 6,
  TCA_PATH_UCX = 7 /* UCX one-sided puts and gets: CPU and GPU memory, inside and across hosts */
} tcaPath;

/* A registered region, as plain bytes that may travel through any channel (files, MPI, sockets).
 * Compatibility: a handle is meaningful only to the ranks of the job that made it, all running the
 * same tca release. Its bytes start with a magic number and a format version; a handle of another
 * format is refused with TCA_ERROR_INVALID_HANDLE, never misread. Each transport that can reach
 * the region appends a record of its own (a UCX remote key, for instance) before the handle is
 * sealed, so TCA_HANDLE_BYTES may grow in a later release; such a release changes the library's
 * soname. Programs size handles with sizeof(tcaHandle) or TCA_HANDLE_BYTES, never a literal. */
#define TCA_HANDLE_BYTES 512
typedef struct tcaHandle {
  unsigned char bytes[TCA_HANDLE_BYTES];
} tcaHandle;

typedef struct tcaDesc_st* tcaDesc;

#define TCA_DMA_CHANNELS 4  /* DMA channels a descriptor may be bound to */
#define TCA_NOTIFY_SLOTS 64 /* notification slots per (source rank, receiver) pair */
/* tca's own layers (the collectives of tca_coll.h, the CUDA engine calibration) use slots
 * [TCA_USER_NOTIFY_SLOTS, TCA_NOTIFY_SLOTS) and channels [TCA_USER_DMA_CHANNELS,
 * TCA_DMA_CHANNELS), so that an application and the collectives can share a process. An
 * application that names one of them gets TCA_ERROR_INVALID_SLOT / TCA_ERROR_INVALID_CHANNEL. */
#define TCA_USER_NOTIFY_SLOTS 32
#define TCA_USER_DMA_CHANNELS 3
#define TCA_ANY_RANK (-1) /* tcaWaitDMARecvDesc: from whichever rank notifies first */

/* Flags of one transfer in a chain. */
#define TCA_FLAG_NOTIFY                                           \
  0x1u /* raise the slot at the destination's owner once this and \
          every earlier transfer of the chain is visible there */

typedef struct tcaConfig {
  /* "auto", or a transport's name ("shm", "mpi", "cuda", "ucx" where built) that AUTO then
   * prefers wherever it reaches; NULL: $TCA_TRANSPORT, else "auto" */
  const char* transport;
  int timeout_ms; /* waits give up after this; 0: $TCA_TIMEOUT_MS, else 60000 */
} tcaConfig;

/* ---- lifecycle ---- */
/* Collective. Initializes MPI too if the program has not (and then finalizes it); a program
 * that initializes MPI itself should ask for MPI_THREAD_SERIALIZED or more, which the MPI guard
 * needs (TCA_MPI_GUARD: under mpirun --enable-recovery a rank dying during an MPI call then
 * fails that call with TCA_ERROR_PEER_FAILED, and tcaFinalize returns without waiting for it). */
TCA_API tcaResult tcaInit(void);
/* The release of the library this program runs with (any of the pointers may be NULL); callable
 * at any time, before tcaInit too. The headers' release is TCA_VERSION_* (tca/tca_version.h). */
TCA_API tcaResult tcaGetVersion(int* major, int* minor, int* patch);
TCA_API tcaResult tcaInitWithConfig(const tcaConfig* config);

/* ---- settings: every environment variable the library reads (docs/SETTINGS.md) ---- */
typedef struct tcaSettingInfo {
  const char* name;          /* e.g. "TCA_TIMEOUT_MS" */
  const char* value;         /* in effect: the environment's, else the default ("": unset) */
  const char* default_value; /* "" where unset means something other than a value */
  const char* accepted;      /* what it accepts, in words */
  const char* meaning;
  int from_environment; /* 1: the environment sets it, 0: the default applies */
  int valid;            /* 0: the environment's value is refused (tcaInit fails naming it) */
} tcaSettingInfo;
/* Callable at any time, before tcaInit too. The strings of `info` stay valid until this
 * thread's next tcaGetSetting call. */
TCA_API tcaResult tcaGetSettingCount(int* count);
TCA_API tcaResult tcaGetSetting(int index, tcaSettingInfo* info);
/* ---- choices by size: the fixed rules (tca-info --choices lists them) ---- */
typedef struct tcaChoiceRule {
  const char* choice; /* e.g. "collective algorithm", "gpu collective protocol", "cuda engine" */
  const char* when;   /* the case it holds for, e.g. "gpu allreduce, ranks <= 2" */
  size_t max_bytes;   /* it holds up to this size (SIZE_MAX: any); in a case the first fits */
  const char* pick;   /* what it chooses, e.g. "ring" */
} tcaChoiceRule;
/* Callable at any time, before tcaInit too; the strings stay valid while the library is loaded.
 * The measured choices are listed by tcaAutoTransport and tcaCudaCalibration. */
TCA_API tcaResult tcaGetChoiceRuleCount(int* count);
TCA_API tcaResult tcaGetChoiceRule(int index, tcaChoiceRule* rule);
TCA_API tcaResult tcaFinalize(void); /* collective */
TCA_API tcaResult tcaRank(int* rank);
TCA_API tcaResult tcaSize(int* size);
TCA_API tcaResult tcaBarrier(void); /* collective; for set-up, not for data ordering */
/* Control exchanges over whatever started the job (TCA_BOOTSTRAP: MPI, PMIx, tca's own sockets),
 * for set-up and agreement between ranks, never for data: collective, blocking, bounded by the
 * timeout. Allgather: all[r*bytes .. (r+1)*bytes) receives rank r's `mine` (bytes > 0). */
TCA_API tcaResult tcaBootstrapAllgather(const void* mine, void* all, size_t bytes);
TCA_API tcaResult tcaBootstrapBroadcast(void* data, size_t bytes, int root);
/* Which bootstrap started the job ("mpi", "pmix", "tcp" or "single") and, in words, why it was
 * chosen; either pointer may be NULL. The strings live until tcaFinalize. */
TCA_API tcaResult tcaBootstrapInfo(const char** name, const char** reason);
TCA_API tcaResult tcaSetTimeout(int timeout_ms);
TCA_API tcaResult tcaGetTimeout(int* timeout_ms); /* the timeout waits use now */
/* The transport AUTO uses between this rank's and `peer`'s host memory ("shm", "mpi", ...). */
TCA_API tcaResult tcaPeerTransport(int peer, const char** name);
/* The transport AUTO takes for a transfer of `bytes` between this rank's memory of kind `local`
 * and `peer`'s of kind `remote` ("shm", "cuda", "ucx", "mpi"). With `table` non-NULL, also the
 * size table behind that choice, "FROM:NAME,..." (e.g. "0:shm,65536:mpi"; "" where AUTO takes
 * the registry's first, as when a transport is forced or TCA_CHOICE=off), valid until this
 * thread's next call. TCA_ERROR_UNREACHABLE where no transport reaches. */
TCA_API tcaResult tcaAutoTransport(int peer, tcaMemKind local, tcaMemKind remote, size_t bytes,
                                   const char** name, const char** table);
/* Whether `path` can carry transfers between this rank and `peer`. */
TCA_API tcaResult tcaPathAvailable(tcaPath path, int peer, int* available);

TCA_API const char* tcaGetErrorString(tcaResult result);
/* Detail of the last failed call on this thread ("" if none). */
TCA_API const char* tcaGetLastErrorMessage(void);

/* ---- memory and handles ---- */
TCA_API tcaResult tcaMalloc(void** ptr, size_t bytes, tcaMemKind kind);
TCA_API tcaResult tcaFree(void* ptr); /* also deregisters every region inside the block */
/* Registers [ptr, ptr+bytes) — from tcaMalloc or the user's own — for remote access. */
TCA_API tcaResult tcaCreateHandle(tcaHandle* handle, void* ptr, size_t bytes, tcaMemKind kind);
TCA_API tcaResult tcaDestroyHandle(const tcaHandle* handle); /* deregisters; owner only */
/* Collective: all[r] receives rank r's `mine`; `all` holds tcaSize() handles. */
TCA_API tcaResult tcaAllgatherHandles(const tcaHandle* mine, tcaHandle* all);
/* Checks a handle (corruption, job, liveness) and reports its owner and size; any output
 * pointer may be NULL. */
TCA_API tcaResult tcaHandleInfo(const tcaHandle* handle, int* owner, size_t* bytes,
                                tcaMemKind* kind);

/* ---- DMA descriptors (chaining mode) ---- */
TCA_API tcaResult tcaDescNew(tcaDesc* desc);
TCA_API tcaResult tcaDescFree(tcaDesc desc);
/* Appends dst[dst_offset .. +bytes) <- src[src_offset .. +bytes). One end must be local. */
TCA_API tcaResult tcaDescSetMemcpy(tcaDesc desc, const tcaHandle* dst, size_t dst_offset,
                                   const tcaHandle* src, size_t src_offset, size_t bytes,
                                   unsigned flags, int notify_slot);
/* Appends a block-stride transfer: `count` blocks of `width` bytes, the i-th block at
 * dst_offset + i*dst_pitch and src_offset + i*src_pitch. */
TCA_API tcaResult tcaDescSetMemcpy2D(tcaDesc desc, const tcaHandle* dst, size_t dst_offset,
                                     size_t dst_pitch, const tcaHandle* src, size_t src_offset,
                                     size_t src_pitch, size_t width, size_t count, unsigned flags,
                                     int notify_slot);
/* Chooses the engine for the whole chain (before tcaDescSet). Default TCA_PATH_AUTO. */
TCA_API tcaResult tcaDescSetPath(tcaDesc desc, tcaPath path);
/* Binds the chain to a DMA channel and prepares it; appending later unbinds it. */
TCA_API tcaResult tcaDescSet(tcaDesc desc, int channel);
/* Kicks a bound chain. Cheap: all set-up was paid in tcaDescSet. */
TCA_API tcaResult tcaStartDMADesc(tcaDesc desc);
/* Returns when every chain kicked on `channel` has completed locally. */
TCA_API tcaResult tcaWaitDMAC(int channel);
/* Waits for one notification on `slot` from `src_rank` (or TCA_ANY_RANK) and consumes it;
 * all data of the notifying chain is then visible. *from (may be NULL) tells the sender. */
TCA_API tcaResult tcaWaitDMARecvDesc(int src_rank, int slot, int* from);
/* Non-blocking form: *arrived = 1 and the notification is consumed if one was there; a poll
 * that finds nothing advances the transports (as MPI_Test does). */
TCA_API tcaResult tcaTestDMARecvDesc(int src_rank, int slot, int* arrived, int* from);

/* ---- immediate transfers (one transfer, complete when the call returns; `src` / `dst` may be
 * any memory of this process: registered, tcaMalloc'd, or a plain heap or device buffer) ---- */
TCA_API tcaResult tcaPut(const tcaHandle* dst, size_t dst_offset, const void* src, size_t bytes);
/* The pseudo-read: the peer's data is written into local memory. */
TCA_API tcaResult tcaGet(void* dst, const tcaHandle* src, size_t src_offset, size_t bytes);

/* ---- PIO and notifications ---- */
/* A pointer through which this process can store straight into [offset, offset+bytes) of
 * a peer's region; TCA_ERROR_UNSUPPORTED where the region is not mapped here. */
TCA_API tcaResult tcaPIOPointer(void** ptr, const tcaHandle* handle, size_t offset, size_t bytes);
/* Orders all earlier PIO stores before any later notification. */
TCA_API tcaResult tcaPIOFence(void);
/* Raises `slot` at `dst_rank` (after tcaPIOFence for PIO data). */
TCA_API tcaResult tcaNotify(int dst_rank, int slot);

/* ---- observing a running job (docs/OPERATING.md) ---- */
/* Writes this rank's state as one JSON line to `file` (a FILE*): the wait in progress, chains
 * kicked and not drained (channel, entries, peers, transports, bytes, age), runs in flight per
 * transport, notifications per peer and slot (sent / received / consumed), the collective in
 * progress with its step, and peers known dead. */
TCA_API tcaResult tcaDumpState(FILE* file);
/* This rank's counters as a JSON string (per peer x transport x direction: transfers, bytes,
 * kicks, notifications, waits, timed_waits, wait_ns, timeouts, errors; latency histograms per
 * peer; TCA_COUNTERS=1 times one operation in 64, timed all).
 * json NULL: *bytes receives the size needed (with the terminating NUL); a buffer smaller than
 * that fails with TCA_ERROR_INVALID_ARGUMENT and the size in *bytes. TCA_ERROR_UNSUPPORTED
 * unless counting (TCA_COUNTERS=1 or TCA_STATS). */
TCA_API tcaResult tcaGetCounters(char* json, size_t* bytes);
/* Sets every counter and histogram to zero. */
TCA_API tcaResult tcaResetCounters(void);

#ifdef __cplusplus
}
#endif

#endif /* TCA_TCA_H */
