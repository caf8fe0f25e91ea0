// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Probe: one block's put with signal from GPU 0 to GPU 1 and back (ping-pong), the data stored
// by the block's threads (16-byte stores, one load in flight each: tca's block form) or by the
// tensor memory accelerator (thread 0 stages chunks in shared memory with bulk loads and sends
// them with bulk stores into the peer's memory). Answers whether bulk stores reach a peer GPU
// and whether one SM moves more through them (it does not: docs/PERFORMANCE.md). One process,
// peer access between GPUs 0 and 1; compute capability 9.0.
//
//   tca-tma-probe [rounds]   (2000 by default)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

enum Mode { kLsu = 0, kTma = 1, kFlag = 2 };

struct Side {
  unsigned char* src;       // this GPU's message (stamped each round)
  unsigned char* peer_dst;  // the peer's receive buffer
  unsigned char* own_dst;   // this GPU's receive buffer (the peer writes it)
  uint64_t* peer_flag;
  uint64_t* own_flag;
  unsigned long long* errors;
  size_t bytes;
  int rounds;
  int initiator;
  int lanes;  // LSU: threads that copy (the others only take part in the barriers)
};

__device__ __forceinline__ uint64_t load_acquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_relaxed(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void fence_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Thread 0 only: bytes from src to dst (both 16-byte aligned, bytes a multiple of 16) through
// `stages` shared-memory buffers of `chunk` bytes: bulk load into a stage (its mbarrier counts
// the bytes), wait, bulk store out of it; a stage is reused once its store has read it. Returns
// after every store has completed (wait_group 0: the writes are performed).
__device__ void tma_copy(unsigned char* dst, const unsigned char* src, size_t bytes,
                         unsigned char* stage, uint64_t* bars, uint32_t* phases, int stages,
                         uint32_t chunk) {
  int used = 0;
  for (size_t off = 0; off < bytes; off += chunk, ++used) {
    const uint32_t n = static_cast<uint32_t>(bytes - off < chunk ? bytes - off : chunk);
    const int s = used % stages;
    if (used >= stages) {
      // At most stages - 1 stores may still be reading their stages.
      switch (stages) {
        case 2:
          asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
          break;
        case 3:
          asm volatile("cp.async.bulk.wait_group.read 2;" ::: "memory");
          break;
        default:
          asm volatile("cp.async.bulk.wait_group.read 3;" ::: "memory");
          break;
      }
    }
    unsigned char* buf = stage + static_cast<size_t>(s) * chunk;
    const uint32_t bar = smem_addr(&bars[s]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(n)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(smem_addr(buf)),
        "l"(src + off), "r"(n), "r"(bar)
        : "memory");
    const uint32_t parity = phases[s];
    uint32_t done = 0;
    while (!done) {
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, "
          "0, p; }"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
    }
    phases[s] ^= 1u;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + off),
                 "r"(smem_addr(buf)), "r"(n)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__device__ void lsu_copy(unsigned char* dst, const unsigned char* src, size_t bytes, int lanes) {
  const size_t units = bytes / 16;
  if (static_cast<int>(threadIdx.x) >= lanes) return;
  const uint4* from = reinterpret_cast<const uint4*>(src);
  uint4* to = reinterpret_cast<uint4*>(dst);
  for (size_t i = threadIdx.x; i < units; i += lanes) to[i] = from[i];
}

// Waits for round `value`'s flag; the message's first and last words carry the round (stamped
// by the sender), any other value counts as an error.
template <Mode kMode>
__device__ void receive(const Side& s, uint64_t value) {
  if (threadIdx.x == 0) {
    while (load_acquire(s.own_flag) < value) {
    }
    const uint64_t* got = reinterpret_cast<const uint64_t*>(s.own_dst);
    if (kMode != kFlag && (got[0] != value || got[s.bytes / 8 - 1] != value))
      atomicAdd(s.errors, 1ull);
  }
  __syncthreads();
}

template <Mode kMode>
__global__ void pingpong(Side s, int stages, uint32_t chunk) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) uint64_t bars[4];
  __shared__ uint32_t phases[4];
  if (kMode == kTma && threadIdx.x == 0) {
    for (int i = 0; i < stages; ++i) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bars[i])) : "memory");
      phases[i] = 0;
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  const size_t words = s.bytes / 8;
  for (int round = 1; round <= s.rounds; ++round) {
    const uint64_t value = static_cast<uint64_t>(round);
    if (!s.initiator) receive<kMode>(s, value);
    if (kMode != kFlag) {
      if (threadIdx.x == 0) {
        uint64_t* w = reinterpret_cast<uint64_t*>(s.src);
        w[0] = value;
        w[words - 1] = value;
      }
      __syncthreads();
      if (kMode == kLsu) {
        lsu_copy(s.peer_dst, s.src, s.bytes, s.lanes);
        __syncthreads();
      } else if (threadIdx.x == 0) {
        // The stamps above are generic-proxy stores the bulk load (async proxy) must see.
        asm volatile("fence.proxy.async.global;" ::: "memory");
        tma_copy(s.peer_dst, s.src, s.bytes, smem, bars, phases, stages, chunk);
      }
    }
    if (threadIdx.x == 0) {
      fence_sys();
      store_relaxed(s.peer_flag, value);
    }
    if (s.initiator) receive<kMode>(s, value);
  }
}

struct Gpu {
  unsigned char *src, *dst;
  uint64_t* flag;
  unsigned long long* errors;
  cudaStream_t stream;
};

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  const size_t most = 1 << 20;
  Gpu g[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaDeviceEnablePeerAccess(1 - d, 0));
    CK(cudaMalloc(&g[d].src, most));
    CK(cudaMalloc(&g[d].dst, most));
    CK(cudaMalloc(&g[d].flag, 64));
    CK(cudaMalloc(&g[d].errors, 8));
    CK(cudaMemset(g[d].src, 0x5a + d, most));
    CK(cudaMemset(g[d].dst, 0, most));
    CK(cudaStreamCreateWithFlags(&g[d].stream, cudaStreamNonBlocking));
    CK(cudaFuncSetAttribute(pingpong<kTma>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            4 * 32768));
    CK(cudaDeviceSynchronize());
  }
  struct Case {
    const char* name;
    Mode mode;
    int threads, lanes, stages;
    uint32_t chunk;
  };
  const Case cases[] = {{"flag only", kFlag, 1024, 0, 0, 0},
                        {"lsu 1024 threads", kLsu, 1024, 1024, 0, 0},
                        {"lsu 1024 threads, 256 copy", kLsu, 1024, 256, 0, 0},
                        {"lsu 256 threads", kLsu, 256, 256, 0, 0},
                        {"tma 2 x 16 KiB", kTma, 1024, 0, 2, 16384},
                        {"tma 4 x 16 KiB", kTma, 1024, 0, 4, 16384},
                        {"tma 4 x 32 KiB", kTma, 1024, 0, 4, 32768},
                        {"tma 2 x 32 KiB, 32 threads", kTma, 32, 0, 2, 32768}};
  std::printf("# one way, us (half a round trip; %d round trips), errors: stamps not seen\n",
              rounds);
  std::printf("%-30s", "bytes");
  std::vector<size_t> sizes;
  for (size_t b = 64; b <= most; b *= 4) sizes.push_back(b);
  for (size_t b : sizes) std::printf(" %10zu", b);
  std::printf("\n");
  for (const Case& c : cases) {
    std::printf("%-30s", c.name);
    for (size_t bytes : sizes) {
      for (int rep = 0; rep < 2; ++rep) {  // the first run warms up, the second is reported
        for (int d = 0; d < 2; ++d) {
          CK(cudaSetDevice(d));
          CK(cudaMemset(g[d].flag, 0, 64));
          CK(cudaMemset(g[d].errors, 0, 8));
          CK(cudaDeviceSynchronize());
        }
        cudaEvent_t start, stop;
        CK(cudaSetDevice(0));
        CK(cudaEventCreate(&start));
        CK(cudaEventCreate(&stop));
        for (int d = 1; d >= 0; --d) {
          CK(cudaSetDevice(d));
          Side s{g[d].src,    g[1 - d].dst, g[d].dst, g[1 - d].flag,  g[d].flag,
                 g[d].errors, bytes,        rounds,   d == 0 ? 1 : 0, c.lanes};
          const size_t dyn = c.mode == kTma ? static_cast<size_t>(c.stages) * c.chunk : 0;
          if (d == 0) CK(cudaEventRecord(start, g[0].stream));
          if (c.mode == kLsu)
            pingpong<kLsu><<<1, c.threads, dyn, g[d].stream>>>(s, c.stages, c.chunk);
          if (c.mode == kTma)
            pingpong<kTma><<<1, c.threads, dyn, g[d].stream>>>(s, c.stages, c.chunk);
          if (c.mode == kFlag)
            pingpong<kFlag><<<1, c.threads, dyn, g[d].stream>>>(s, c.stages, c.chunk);
          CK(cudaGetLastError());
          if (d == 0) CK(cudaEventRecord(stop, g[0].stream));
        }
        for (int d = 0; d < 2; ++d) {
          CK(cudaSetDevice(d));
          CK(cudaStreamSynchronize(g[d].stream));
        }
        CK(cudaSetDevice(0));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, start, stop));
        unsigned long long errors[2] = {0, 0};
        for (int d = 0; d < 2; ++d) {
          CK(cudaSetDevice(d));
          CK(cudaMemcpy(&errors[d], g[d].errors, 8, cudaMemcpyDeviceToHost));
        }
        if (rep == 1) {
          const double us = ms * 1000.0 / (2.0 * rounds);
          if (errors[0] + errors[1] != 0)
            std::printf(" %7.3f(E%llu)", us, errors[0] + errors[1]);
          else
            std::printf(" %10.3f", us);
        }
        CK(cudaSetDevice(0));
        CK(cudaEventDestroy(start));
        CK(cudaEventDestroy(stop));
      }
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
