// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
/*
 * The in-memory form of a GPU collective's program, shared by the library
 * (which builds it at tcaCollNew) and tca/tca_coll_device.cuh (which runs it).
 * Not an API: its layout changes with the library, and programs are only ever
 * made by tcaCollNew.
 *
 * A program has one instruction list per channel (a block of the running grid)
 * and iteration parity (scratch is double-buffered); every address in it is
 * resolved: local, or a peer's memory mapped for this GPU. Signal cells hold
 * the number of the last iteration that raised them, so they never need
 * resetting.
 */
#ifndef TCA_DETAIL_COLL_PROGRAM_H
#define TCA_DETAIL_COLL_PROGRAM_H

#include <stdint.h>

#ifdef __cplusplus
namespace tca_coll_program {

enum InstructionKind : uint32_t {
  kSend = 0,              // copy the segments (into the peer), then raise its signal
  kInlineSend = 1,        // the source segments, in order, as one inline message to `cells`
                          // (no segments: the flag alone, in one cell)
  kAwait = 2,             // wait for the own signal cell
  kInlineAwait = 3,       // wait for the inline message in `cells`, write it to the segments
  kPostCredit = 4,        // tell a writer this rank has started the iteration
  kAwaitCredit = 5,       // wait until a receiver has started the iteration
  kReduce = 6,            // dst = a op b, `count` elements
  kCopy = 7,              // local copy of the segments
  kInlineAwaitReduce = 8  // dst = a op (the inline message in `cells`), `count` elements;
                          // with `forward`, dst also goes out as an inline message to there
};

struct Segment {
  unsigned char* dst;
  const unsigned char* src;
  uint64_t bytes;
  unsigned char* local_copy;  // send: also store the bytes here (this rank's memory), or null
};

struct Instruction {
  uint32_t kind;
  uint32_t first_segment;
  uint32_t segments;
  uint32_t reserved;
  uint64_t* signal;  // send, credit post: the peer's cell; awaits: the own cell
  uint64_t* cells;   // inline message: the peer's mailbox (send) or the own (await)
  uint64_t bytes;    // inline message: its length
  void* dst;         // reductions
  const void* a;
  const void* b;
  uint64_t count;     // reductions: elements
  uint64_t* forward;  // kInlineAwaitReduce: a peer's mailbox that is sent dst, or null
};

struct Channel {  // by iteration parity: its instructions, and the segments they use
  uint32_t first_instruction[2];
  uint32_t instructions[2];
  uint32_t first_segment[2];
  uint32_t segments[2];
};

struct Program {
  uint32_t channels;
  uint32_t type;  // tcaDataType
  uint32_t op;    // tcaRedOp
  uint32_t reserved;
  uint64_t timeout_ns;     // a wait gives up after this long
  uint64_t* started;       // by channel: calls begun, which number the iterations
  int* failure;            // device memory: 0, or the tcaResult that ended an iteration early
  int* error;              // host-mapped copy of *failure, for the host
  const Channel* channel;  // [channels]
  const Instruction* instruction;
  const Segment* segment;
  // A traced stream-ordered iteration (else null): host-mapped and 16-byte aligned, per channel
  // the block's start and end on the GPU's global timer (one store; zero until then).
  uint64_t* stamps;
};

// The doorbell of a resident kernel that serves host-called iterations (device_kernel.cu), in
// host-mapped memory. Leaving is a Dekker handshake with the host's ring: the kernel sets
// `leaving`, fences, and looks at `requested` once more; the host sets `requested`, fences,
// and looks at `leaving`. So either the kernel sees the ring, or the host sees it leave.
struct Doorbell {
  uint64_t requested;  // host: iterations asked for; kStopServing: leave at once
  uint64_t completed;  // kernel: iterations served (each released after its results)
  uint32_t leaving;    // kernel: 1 once it has decided to end (the host resets it at launch)
  uint32_t reserved;
};
constexpr uint64_t kStopServing = ~0ull;

}  // namespace tca_coll_program
#endif

#endif /* TCA_DETAIL_COLL_PROGRAM_H */
