// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-ipc-copy-probe: copy-engine bandwidth into CUDA-IPC-mapped allocations by allocation size
// (found: sizes that are not whole 2 MiB pages ran 290-300 GB/s pushes against 375-390; the reason
// tcaMalloc rounds GPU allocations up, docs/CUDA.md). It began as: why tca-pingpong saw ~300 GB/s
// where tca's calibration and tca-topo saw ~390. Two processes (fork, no MPI), one GPU each
// (process r uses device r), CUDA IPC import of the peer's buffers as tca does (cudaMalloc +
// cudaIpcGetMemHandle + cudaIpcOpenMemHandle(lazy)), host-flag notifications.
// For several allocation sizes of the send/recv buffers it measures, at 16/64/256 MiB:
//   pp_push : ping-pong, each side cudaMemcpyAsync(peer_recv <- my_send) on its own stream,
//             stream sync, host flag to the peer (tca-pingpong's ref.cuda_memcpy_peer shape)
//   pp_pull : ping-pong, the receiver copies (my_recv <- peer_send) on its own stream
//   serial  : rank 0 alone, 10 x (push copy; sync)
//   piped   : rank 0 alone, 10 push copies back to back, then sync (tca-topo's shape)
// then the same without IPC (rank 0 allocates on both GPUs itself), then again after pinning
// 2 x (512 MiB - 4 KiB) of memfd host memory with cudaHostRegister (what tca-pingpong's
// allocate_buffers does for its CPU buffers).
// Built as tca-ipc-copy-probe with the CUDA tools (tools/CMakeLists.txt).
// Run:   tca-ipc-copy-probe            (needs 2 visible GPUs with peer access)
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#define CK(call)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "rank %d: %s:%d %s: %s\n", g_rank, __FILE__, __LINE__, #call, \
                   cudaGetErrorString(e_));                                              \
      std::_Exit(2);                                                                     \
    }                                                                                    \
  } while (0)

static int g_rank = 0;
constexpr size_t MiB = size_t{1} << 20;

struct Shared {
  std::atomic<int> count;
  std::atomic<int> generation;
  std::atomic<uint64_t> flag[2];  // flag[r]: messages that have arrived at rank r
  cudaIpcMemHandle_t send_handle[2];
  cudaIpcMemHandle_t recv_handle[2];
};
static Shared* sh = nullptr;

static void barrier() {
  const int gen = sh->generation.load(std::memory_order_acquire);
  if (sh->count.fetch_add(1, std::memory_order_acq_rel) == 1) {
    sh->count.store(0, std::memory_order_relaxed);
    sh->generation.store(gen + 1, std::memory_order_release);
  } else {
    while (sh->generation.load(std::memory_order_acquire) == gen) {
    }
  }
}

__global__ void fill_kernel(uint64_t* p, size_t words, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words;
       i += size_t(gridDim.x) * blockDim.x) {
    uint64_t x = seed + i * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    p[i] = x ^ (x >> 31);
  }
}
static void fill_random(void* p, size_t bytes, uint64_t seed) {
  fill_kernel<<<1024, 256>>>(static_cast<uint64_t*>(p), bytes / 8, seed);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
}

using PtrAttr = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
static PtrAttr ptr_attr() {
  static PtrAttr f = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &fn, 4000, cudaEnableDefault, &q));
    return reinterpret_cast<PtrAttr>(fn);
  }();
  return f;
}
static std::string describe(const char* name, const void* p) {
  CUdeviceptr start = 0;
  size_t size = 0;
  ptr_attr()(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)p);
  ptr_attr()(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)p);
  char text[200];
  std::snprintf(text, sizeof text, "%s=%p (%%2MiB=%zu KiB, range %zu B = %.4f MiB)", name, p,
                (size_t)((uintptr_t)p % (2 * MiB)) / 1024, size, size / double(MiB));
  return text;
}

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Copy {  // one message of this rank: dst <- src on `stream`
  void* dst;
  const void* src;
};

static uint64_t g_sent = 0, g_received = 0;
static void notify_peer() { sh->flag[1 - g_rank].store(++g_sent, std::memory_order_release); }
static void wait_peer() {
  ++g_received;
  while (sh->flag[g_rank].load(std::memory_order_acquire) < g_received) {
  }
}
static void send(const Copy& c, size_t bytes, cudaStream_t s) {
  CK(cudaMemcpyAsync(c.dst, c.src, bytes, cudaMemcpyDefault, s));
  CK(cudaStreamSynchronize(s));
  notify_peer();
}

// Seconds per message (half a round trip), median of `trials` trials of `rounds` round trips.
static double pingpong(const Copy& mine, size_t bytes, cudaStream_t s, int rounds, int trials) {
  auto round_trips = [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (g_rank == 0) {
        send(mine, bytes, s);
        wait_peer();
      } else {
        wait_peer();
        send(mine, bytes, s);
      }
    }
  };
  barrier();
  round_trips(1);
  std::vector<double> t;
  for (int k = 0; k < trials; ++k) {
    const double b = now();
    round_trips(rounds);
    t.push_back((now() - b) / (2.0 * rounds));
  }
  barrier();
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Rank 0 alone: push copies, each synchronized (serial) or back to back (piped). GB/s.
static void one_way(const Copy& c, size_t bytes, cudaStream_t s, double* serial, double* piped) {
  const int n = 10;
  CK(cudaMemcpyAsync(c.dst, c.src, bytes, cudaMemcpyDefault, s));
  CK(cudaStreamSynchronize(s));
  double b = now();
  for (int i = 0; i < n; ++i) {
    CK(cudaMemcpyAsync(c.dst, c.src, bytes, cudaMemcpyDefault, s));
    CK(cudaStreamSynchronize(s));
  }
  *serial = bytes * double(n) / (now() - b) * 1e-9;
  b = now();
  for (int i = 0; i < n; ++i) CK(cudaMemcpyAsync(c.dst, c.src, bytes, cudaMemcpyDefault, s));
  CK(cudaStreamSynchronize(s));
  *piped = bytes * double(n) / (now() - b) * 1e-9;
}

static const size_t kMessages[] = {16 * MiB, 64 * MiB, 256 * MiB};

static void report(const char* label, size_t alloc, size_t bytes, double pp_push, double pp_pull,
                   double serial, double piped) {
  std::printf(
      "%-26s alloc %10zu  msg %4zu MiB  pp_push %6.1f  pp_pull %6.1f  serial %6.1f  "
      "piped %6.1f GB/s\n",
      label, alloc, bytes / MiB, pp_push, pp_pull, serial, piped);
  std::fflush(stdout);
}

// Both ranks: buffers of `alloc` bytes each, peer's mapped through CUDA IPC.
static void run_ipc(const char* label, size_t alloc, cudaStream_t s) {
  void *send_buf = nullptr, *recv_buf = nullptr;
  CK(cudaMalloc(&send_buf, alloc));
  CK(cudaMalloc(&recv_buf, alloc));
  fill_random(send_buf, alloc, 1234 + g_rank);
  CK(cudaMemset(recv_buf, 0xA5, alloc));
  CK(cudaDeviceSynchronize());
  CK(cudaIpcGetMemHandle(&sh->send_handle[g_rank], send_buf));
  CK(cudaIpcGetMemHandle(&sh->recv_handle[g_rank], recv_buf));
  barrier();
  const int peer = 1 - g_rank;
  void *peer_send = nullptr, *peer_recv = nullptr;
  CK(cudaIpcOpenMemHandle(&peer_send, sh->send_handle[peer], cudaIpcMemLazyEnablePeerAccess));
  CK(cudaIpcOpenMemHandle(&peer_recv, sh->recv_handle[peer], cudaIpcMemLazyEnablePeerAccess));
  barrier();
  if (g_rank == 0)
    std::printf("# %s: %s, %s\n", label, describe("own send", send_buf).c_str(),
                describe("imported peer recv", peer_recv).c_str());
  for (size_t bytes : kMessages) {
    if (bytes > alloc) continue;
    const double push = pingpong({peer_recv, send_buf}, bytes, s, 4, 5);
    const double pull = pingpong({recv_buf, peer_send}, bytes, s, 4, 5);
    double serial = 0, piped = 0;
    if (g_rank == 0) one_way({peer_recv, send_buf}, bytes, s, &serial, &piped);
    barrier();
    if (g_rank == 0)
      report(label, alloc, bytes, bytes / push * 1e-9, bytes / pull * 1e-9, serial, piped);
  }
  barrier();
  CK(cudaIpcCloseMemHandle(peer_send));
  CK(cudaIpcCloseMemHandle(peer_recv));
  barrier();
  CK(cudaFree(send_buf));
  CK(cudaFree(recv_buf));
}

// Rank 0 alone, no IPC: buffers on both GPUs allocated in this process (native peer mapping).
static void run_native(const char* label, size_t alloc) {
  void *src[2], *dst[2];
  cudaStream_t st[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaMalloc(&src[d], alloc));
    CK(cudaMalloc(&dst[d], alloc));
    fill_random(src[d], alloc, 99 + d);
    CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
    const cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);  // both directions, or the
    if (e == cudaErrorPeerAccessAlreadyEnabled)
      cudaGetLastError();  // copy is staged via host
    else
      CK(e);
  }
  CK(cudaSetDevice(0));
  std::printf("# %s: %s, %s\n", label, describe("dev0 src", src[0]).c_str(),
              describe("dev1 dst", dst[1]).c_str());
  for (size_t bytes : kMessages) {
    if (bytes > alloc) continue;
    auto rt = [&](int n) {
      for (int i = 0; i < n; ++i)
        for (int d = 0; d < 2; ++d) {
          CK(cudaSetDevice(d));
          CK(cudaMemcpyAsync(dst[1 - d], src[d], bytes, cudaMemcpyDefault, st[d]));
          CK(cudaStreamSynchronize(st[d]));
        }
    };
    rt(1);
    std::vector<double> t;
    for (int k = 0; k < 5; ++k) {
      const double b = now();
      rt(4);
      t.push_back((now() - b) / 8.0);
    }
    std::sort(t.begin(), t.end());
    CK(cudaSetDevice(0));
    double serial = 0, piped = 0;
    one_way({dst[1], src[0]}, bytes, st[0], &serial, &piped);
    report(label, alloc, bytes, bytes / t[2] * 1e-9, 0.0, serial, piped);
  }
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaFree(src[d]));
    CK(cudaFree(dst[d]));
    CK(cudaStreamDestroy(st[d]));
  }
  CK(cudaSetDevice(0));
}

static void child(int rank) {
  g_rank = rank;
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::fprintf(stderr, "needs 2 GPUs, sees %d\n", count);
    std::_Exit(3);
  }
  CK(cudaSetDevice(rank));
  CK(cudaDeviceEnablePeerAccess(1 - rank, 0));  // as tca's connect_peer does
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  if (rank == 0) {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    std::printf("# %s; pp_* = ping-pong half round trip, median of 5 x 4 round trips\n", p.name);
  }
  struct Config {
    const char* label;
    size_t alloc;
  };
  const Config configs[] = {
      {"A pingpong-shape 512M-4K", 512 * MiB - 4096},  // tca-pingpong -e 256M
      {"B calib/topo 256M", 256 * MiB},                // calibration, tca-topo
      {"C 512M", 512 * MiB},
      {"D 256M+4K", 256 * MiB + 4096},
      {"E 256M+2M", 258 * MiB},
      {"F 128M-4K", 128 * MiB - 4096},  // tca-pingpong -e 64M
      {"A' again 512M-4K", 512 * MiB - 4096},
  };
  for (const Config& c : configs) run_ipc(c.label, c.alloc, s);
  barrier();
  if (rank == 0) {
    run_native("N1 native 512M-4K", 512 * MiB - 4096);
    run_native("N2 native 256M", 256 * MiB);
  }
  barrier();
  // tca-pingpong's CPU buffers: 2 memfd blocks of the same size, pinned and mapped.
  std::vector<void*> pinned;
  for (int i = 0; i < 2; ++i) {
    const size_t bytes = 512 * MiB - 4096;
    const int fd = memfd_create("ce_probe", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, bytes) != 0) std::_Exit(4);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) std::_Exit(4);
    std::memset(p, 0, bytes);
    CK(cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
    pinned.push_back(p);
  }
  barrier();
  run_ipc("P1 pinned-host, 256M", 256 * MiB, s);
  run_ipc("P2 pinned-host, 512M-4K", 512 * MiB - 4096, s);
  barrier();
  for (void* p : pinned) cudaHostUnregister(p);
  CK(cudaStreamDestroy(s));
  std::_Exit(0);
}

int main() {
  // No CUDA call before fork.
  void* mem =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  sh = new (mem) Shared();
  pid_t pids[2];
  for (int r = 0; r < 2; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) child(r);
  }
  int rc = 0;
  for (int r = 0; r < 2; ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
  }
  return rc;
}
