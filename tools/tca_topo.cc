// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-topo: how the GPUs of a job are linked and how fast tca moves data between them.
// Run one rank per GPU:  tca-run -n <GPUs> tca-topo  (or mpirun, torchrun, srun)
//
// Prints (rank 0) the GPUs, their link matrix (NVLink links or PCIe distance, from NVML), the
// measured one-way latency matrix (GPU-initiated 8-byte put with signal, half a round trip), the
// one-direction bandwidth matrices of the copy engines and of the SMs and the two-direction
// bandwidth of the copy engines (as CUDA's p2pBandwidthLatencyTest prints them, but through
// tca), the costs of tca's GPU programs that tca-sim takes (topo_device_program.h), and what the
// automatic path picks per size with the calibration behind its crossover.
// The ranks exchange their results through tca's bootstrap: no MPI. The header names the
// bootstrap that started the job and why it was chosen.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "device_pingpong.h"
#include "tca/tca.h"
#include "tca/tca_cuda.h"
#include "tca_harness/check.h"
#include "tca_harness/launch.h"
#include "tca_harness/ranks.h"
#include "tca_harness/report.h"
#include "topo_device_program.h"

namespace {

constexpr size_t kBandwidthBytes = size_t{256} << 20;
constexpr int kBandwidthKicks = 10;
constexpr int kLatencyRounds = 20000;

using tca_harness::die;  // "tca-topo: rank R: ...", then the job ends

void check(tcaResult result, const char* call) {
  if (result != TCA_SUCCESS)
    die(fmt::format("{} failed: {}: {}", call, tcaGetErrorString(result),
                    tcaGetLastErrorMessage()));
}
void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) die(fmt::format("{} failed: {}", call, cudaGetErrorString(error)));
}
#define CHECK(call) check((call), #call)

// The text goes to stdout, or to stderr when --json puts the report there; rank 0 fills the
// report (tools/report/README.md has its rows: link, latency, bandwidth, halo, auto_path).
std::FILE* g_text = stdout;
tca_harness::Report* g_report = nullptr;
void add_row(nlohmann::ordered_json row) {
  if (g_report != nullptr) g_report->add_row(std::move(row));
}
// One row per ordered pair of ranks of a matrix (not the diagonal).
void add_matrix_rows(const nlohmann::ordered_json& fields, const char* value_key,
                     const std::vector<double>& values, int size) {
  for (int a = 0; a < size; ++a)
    for (int b = 0; b < size; ++b) {
      if (a == b) continue;
      nlohmann::ordered_json row = fields;
      row["from"] = a;
      row["to"] = b;
      row[value_key] = values[static_cast<size_t>(a) * size + b];
      add_row(std::move(row));
    }
}

// ---- NVML, loaded at run time: the library is the driver's, absent where no GPU is ----

class Nvml {
 public:
  Nvml() {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) return;
    init_ = symbol<int (*)()>("nvmlInit_v2");
    by_bus_id_ = symbol<int (*)(const char*, Device*)>("nvmlDeviceGetHandleByPciBusId_v2");
    p2p_status_ = symbol<int (*)(Device, Device, int, int*)>("nvmlDeviceGetP2PStatus");
    nvlink_state_ = symbol<int (*)(Device, unsigned, int*)>("nvmlDeviceGetNvLinkState");
    ancestor_ = symbol<int (*)(Device, Device, int*)>("nvmlDeviceGetTopologyCommonAncestor");
    ready_ = init_ != nullptr && by_bus_id_ != nullptr && p2p_status_ != nullptr &&
             nvlink_state_ != nullptr && ancestor_ != nullptr && init_() == kSuccess;
  }
  ~Nvml() {
    if (library_ != nullptr) dlclose(library_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool ready() const { return ready_; }

  // "NV<links>" where the pair talks over NVLink, else the PCIe distance as nvidia-smi topo
  // names it (PIX, PXB, PHB, NODE, SYS); "X" for a GPU and itself.
  std::string link(const char* bus_a, const char* bus_b) const {
    if (std::string(bus_a) == bus_b) return "X";
    Device a = nullptr;
    Device b = nullptr;
    if (!ready_ || by_bus_id_(bus_a, &a) != kSuccess || by_bus_id_(bus_b, &b) != kSuccess)
      return "?";
    int status = -1;
    if (p2p_status_(a, b, kP2pNvlink, &status) == kSuccess && status == kP2pOk) {
      int links = 0;
      for (unsigned link = 0; link < kMaxNvLinks; ++link) {
        int active = 0;
        if (nvlink_state_(a, link, &active) == kSuccess && active == kEnabled) ++links;
      }
      return fmt::format("NV{}", links);
    }
    int level = -1;
    if (ancestor_(a, b, &level) != kSuccess) return "?";
    if (level <= 10) return "PIX";
    if (level <= 20) return "PXB";
    if (level <= 30) return "PHB";
    if (level <= 40) return "NODE";
    return "SYS";
  }

 private:
  using Device = void*;
  static constexpr int kSuccess = 0;
  static constexpr int kP2pNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
  static constexpr int kP2pOk = 0;      // NVML_P2P_STATUS_OK
  static constexpr int kEnabled = 1;    // NVML_FEATURE_ENABLED
  static constexpr unsigned kMaxNvLinks = 18;

  template <typename Function>
  Function symbol(const char* name) {
    return reinterpret_cast<Function>(dlsym(library_, name));
  }

  void* library_ = nullptr;
  bool ready_ = false;
  int (*init_)() = nullptr;
  int (*by_bus_id_)(const char*, Device*) = nullptr;
  int (*p2p_status_)(Device, Device, int, int*) = nullptr;
  int (*nvlink_state_)(Device, unsigned, int*) = nullptr;
  int (*ancestor_)(Device, Device, int*) = nullptr;
};

// ---- what each rank reports ----

struct Card {
  char host[64];
  char name[256];
  char bus_id[32];
  int device;
};

// Pseudo-random bytes (xorshift64): engines are timed on data like real data, since constant
// bytes can move faster.
void fill_random(void* device, size_t bytes, uint64_t seed) {
  std::vector<uint64_t> words((bytes + 7) / 8);
  uint64_t state = seed | 1;
  for (uint64_t& word : words) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    word = state;
  }
  CHECK(cudaMemcpy(device, words.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaDeviceSynchronize());
}

std::string size_name(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

class Topo {
 public:
  Topo() {
    rank_ = tca_harness::job_rank();
    size_ = tca_harness::job_size();
    CHECK(tcaCudaDevice(&device_));
    CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CHECK(tcaMalloc(&src_, kBandwidthBytes, TCA_MEM_GPU));
    CHECK(tcaMalloc(&dst_, kBandwidthBytes, TCA_MEM_GPU));
    fill_random(src_, kBandwidthBytes, 0x1234567u + rank_);
    CHECK(tcaCreateHandle(&src_handle_, src_, kBandwidthBytes, TCA_MEM_GPU));
    tcaHandle mine{};
    CHECK(tcaCreateHandle(&mine, dst_, kBandwidthBytes, TCA_MEM_GPU));
    dst_handles_.resize(size_);
    CHECK(tcaAllgatherHandles(&mine, dst_handles_.data()));
  }
  ~Topo() {
    tcaBarrier();
    tcaFree(src_);
    tcaFree(dst_);
    cudaStreamDestroy(stream_);
  }
  Topo(const Topo&) = delete;
  Topo& operator=(const Topo&) = delete;

  void print_devices_and_links() {
    Card mine{};
    gethostname(mine.host, sizeof(mine.host) - 1);
    cudaDeviceProp properties{};
    CHECK(cudaGetDeviceProperties(&properties, device_));
    std::snprintf(mine.name, sizeof(mine.name), "%s", properties.name);
    CHECK(cudaDeviceGetPCIBusId(mine.bus_id, sizeof(mine.bus_id), device_));
    mine.device = device_;
    const std::vector<Card> cards = tca_harness::allgather_value(mine);
    if (rank_ != 0) return;
    fmt::print(g_text, "GPUs (one rank each)\n");
    for (int r = 0; r < size_; ++r)
      fmt::print(g_text, "  rank {:2}  {}  GPU {}  {}  {}\n", r, cards[r].host, cards[r].device,
                 cards[r].bus_id, cards[r].name);
    const Nvml nvml;
    fmt::print(g_text, "\nLink matrix (NVML{}; NV<n>: n NVLink links, else PCIe distance)\n",
               nvml.ready() ? "" : " unavailable");
    const auto link = [&](int a, int b) {
      if (std::string(cards[a].host) != cards[b].host) return std::string("net");
      return nvml.link(cards[a].bus_id, cards[b].bus_id);
    };
    print_matrix(link);
    for (int a = 0; a < size_; ++a)
      for (int b = 0; b < size_; ++b)
        if (a != b) add_row({{"table", "link"}, {"from", a}, {"to", b}, {"link", link(a, b)}});
  }

  // Half the round trip of an 8-byte put with signal, GPU-initiated on both sides; with
  // `bare_flag`, of a relaxed flag store alone (no data, no ordering: the link's floor).
  void latency_matrix(bool bare_flag, const char* title) {
    std::vector<double> microseconds(static_cast<size_t>(size_) * size_, 0.0);
    int signal = 0;
    for (int a = 0; a < size_; ++a) {
      for (int b = a + 1; b < size_; ++b, ++signal) {
        const int cell = (signal + (bare_flag ? size_ * size_ : 0)) % TCA_DEVICE_SIGNALS;
        CHECK(tcaBarrier());
        if (rank_ != a && rank_ != b) continue;
        const int peer = rank_ == a ? b : a;
        tca_tools::PingPong pingpong{};
        CHECK(tcaDevicePointer(&pingpong.remote_dst, &dst_handles_[peer], 0, 8));
        pingpong.local_src = src_;
        pingpong.bytes = 8;
        CHECK(tcaDeviceSignal(&pingpong.remote_signal, peer, cell));
        CHECK(tcaDeviceSignal(&pingpong.own_signal, rank_, cell));
        pingpong.initiator = rank_ == a;
        pingpong.bare_flag = bare_flag;
        pingpong.threads = 1;
        pingpong.rounds = 1000;  // warm-up
        CHECK(tca_tools::launch_device_pingpong(pingpong, stream_));
        pingpong.first_value = pingpong.rounds;
        pingpong.rounds = kLatencyRounds;
        cudaEvent_t begin = nullptr;
        cudaEvent_t end = nullptr;
        CHECK(cudaEventCreate(&begin));
        CHECK(cudaEventCreate(&end));
        CHECK(cudaEventRecord(begin, stream_));
        CHECK(tca_tools::launch_device_pingpong(pingpong, stream_));
        CHECK(cudaEventRecord(end, stream_));
        CHECK(cudaEventSynchronize(end));
        float milliseconds = 0;
        CHECK(cudaEventElapsedTime(&milliseconds, begin, end));
        cudaEventDestroy(begin);
        cudaEventDestroy(end);
        const double one_way = milliseconds * 1e3 / (2.0 * kLatencyRounds);
        microseconds[a * size_ + b] = microseconds[b * size_ + a] = one_way;
      }
    }
    reduce_and_print(title, &microseconds, "{:.2f}",
                     {{"table", "latency"}, {"measure", bare_flag ? "flag" : "put_signal"}},
                     "latency_us");
  }

  // Kicks of one 256 MiB transfer on `path`, one direction or both at once.
  void bandwidth_matrix(tcaPath path, bool both_directions, const char* title) {
    const nlohmann::ordered_json fields = {{"table", "bandwidth"},
                                           {"engine", path == TCA_PATH_CUDA_SM ? "sm" : "ce"},
                                           {"direction", both_directions ? "both" : "one"},
                                           {"source", constant_source_ ? "constant" : "random"}};
    std::vector<double> gbps(static_cast<size_t>(size_) * size_, 0.0);
    for (int a = 0; a < size_; ++a) {
      for (int b = 0; b < size_; ++b) {
        if (a == b || (both_directions && b < a)) continue;
        CHECK(tcaBarrier());
        const bool sends = rank_ == a || (both_directions && rank_ == b);
        if (!sends) continue;
        const int peer = rank_ == a ? b : a;
        const double rate = kick_rate(path, peer, kBandwidthBytes, kBandwidthKicks);
        gbps[rank_ * size_ + peer] = rate;
      }
    }
    if (both_directions) {  // report the sum of the two directions on both cells
      const std::vector<double> total = combine(gbps, false);
      for (int a = 0; a < size_; ++a)
        for (int b = 0; b < size_; ++b)
          gbps[a * size_ + b] = total[a * size_ + b] + total[b * size_ + a];
      if (rank_ == 0) {
        fmt::print(g_text, "\n{}\n", title);
        print_matrix_values(gbps, "{:.1f}");
        add_matrix_rows(fields, "bandwidth_GBps", gbps, size_);
      }
      return;
    }
    reduce_and_print(title, &gbps, "{:.1f}", fields, "bandwidth_GBps");
  }

  // A plane of n*n doubles of an n^3 grid (x fastest) in each orientation, from rank 0's grid
  // into rank 1's packed buffer, next to a contiguous transfer of the same bytes.
  void halo_planes() {
    if (size_ < 2) return;
    constexpr size_t n = 512;
    constexpr size_t element = sizeof(double);
    constexpr size_t plane = n * n * element;
    void* grid = nullptr;
    CHECK(tcaMalloc(&grid, n * n * n * element, TCA_MEM_GPU));
    fill_random(grid, n * n * n * element, 0x7654321u);
    tcaHandle grid_handle{};
    CHECK(tcaCreateHandle(&grid_handle, grid, n * n * n * element, TCA_MEM_GPU));
    struct Plane {
      const char* name;
      size_t offset, pitch, width, count;
    };
    const Plane planes[] = {
        {"contiguous", 0, plane, plane, 1},
        {"z (k=1)", plane, plane, plane, 1},
        {"y (j=1)", n * element, n * n * element, n * element, n},
        {"x (i=1)", element, n * element, element, n * n},
    };
    const std::pair<const char*, tcaPath> paths[] = {
        {"auto", TCA_PATH_CUDA}, {"CE", TCA_PATH_CUDA_CE}, {"SM", TCA_PATH_CUDA_SM}};
    if (rank_ == 0) {
      fmt::print(g_text,
                 "\nHalo planes, rank 0 -> rank 1: {0}x{0} doubles of a {0}^3 grid into a packed "
                 "buffer, GB/s and % of contiguous on the same path; one: each kick completed "
                 "before the next, piped: 20 kicks back to back\n",
                 n);
      fmt::print(g_text, "  {:>12}", "plane");
      for (const auto& path : paths)
        fmt::print(g_text, " {:>14} {:>14}", fmt::format("{} one", path.first),
                   fmt::format("{} piped", path.first));
      fmt::print(g_text, "\n");
      std::vector<double> contiguous(6, 0.0);
      for (const Plane& p : planes) {
        fmt::print(g_text, "  {:>12}", p.name);
        for (size_t i = 0; i < 3; ++i) {
          tcaDesc desc = nullptr;
          CHECK(tcaDescNew(&desc));
          CHECK(tcaDescSetMemcpy2D(desc, &dst_handles_[1], 0, p.width, &grid_handle, p.offset,
                                   p.pitch, p.width, p.count, 0, 0));
          CHECK(tcaDescSetPath(desc, paths[i].second));
          CHECK(tcaDescSet(desc, 0));
          const double rates[2] = {one_at_a_time_rate(desc, plane, 30),
                                   pipelined_rate(desc, plane, 20)};
          CHECK(tcaDescFree(desc));
          for (int mode = 0; mode < 2; ++mode) {
            double& reference = contiguous[2 * i + mode];
            if (p.offset == 0) reference = rates[mode];
            fmt::print(g_text, " {:>14}",
                       fmt::format("{:.0f} ({:.0f}%)", rates[mode], 100 * rates[mode] / reference));
            add_row({{"table", "halo"},
                     {"plane", p.name},
                     {"path", paths[i].first},
                     {"mode", mode == 0 ? "one" : "piped"},
                     {"GBps", rates[mode]},
                     {"percent_of_contiguous", 100 * rates[mode] / reference}});
          }
        }
        fmt::print(g_text, "\n");
      }
    }
    CHECK(tcaBarrier());
    CHECK(tcaFree(grid));
  }

  // Every later measurement reads a source of one repeated byte.
  void constant_source() {
    constant_source_ = true;
    CHECK(cudaMemset(src_, 0x3c, kBandwidthBytes));
    CHECK(cudaDeviceSynchronize());
  }

  // The transport AUTO takes from rank 0 per size and memory kinds, with the size table found
  // at start-up where several transports reach a peer (tcaAutoTransport).
  void transport_choices() {
    if (rank_ != 0) return;
    fmt::print(g_text,
               "\nAutomatic transport (TCA_PATH_AUTO) from rank 0, per size and memory kinds\n");
    const std::vector<size_t> sizes = {8,
                                       512,
                                       size_t{8} << 10,
                                       size_t{64} << 10,
                                       size_t{512} << 10,
                                       size_t{4} << 20,
                                       size_t{256} << 20};
    fmt::print(g_text, "  {:>8}  {:>9}", "to", "memory");
    for (size_t bytes : sizes) fmt::print(g_text, "  {:>8}", size_name(bytes));
    fmt::print(g_text, "  table (from bytes:transport)\n");
    const std::pair<tcaMemKind, tcaMemKind> kinds[] = {
        {TCA_MEM_CPU, TCA_MEM_CPU}, {TCA_MEM_GPU, TCA_MEM_GPU}, {TCA_MEM_CPU, TCA_MEM_GPU}};
    for (int peer = 0; peer < size_; ++peer) {
      for (const auto& [local, remote] : kinds) {
        const char* table = nullptr;
        const char* name = nullptr;
        if (tcaAutoTransport(peer, local, remote, 8, &name, &table) != TCA_SUCCESS) continue;
        const std::string found = table;
        fmt::print(g_text, "  {:>8}  {:>9}", fmt::format("rank {}", peer),
                   fmt::format("{}->{}", local == TCA_MEM_GPU ? "gpu" : "cpu",
                               remote == TCA_MEM_GPU ? "gpu" : "cpu"));
        for (size_t bytes : sizes) {
          CHECK(tcaAutoTransport(peer, local, remote, bytes, &name, nullptr));
          fmt::print(g_text, "  {:>8}", name);
        }
        fmt::print(g_text, "  {}\n", found.empty() ? "(registry order)" : found);
      }
    }
  }

  // The engine TCA_PATH_CUDA picks per size, next to the calibration it picks from.
  void auto_choices() {
    if (rank_ != 0) return;
    fmt::print(g_text,
               "\nAutomatic path (TCA_PATH_CUDA) from rank 0, per size (a size between two rows "
               "takes the pick of the row above it)\n");
    for (int peer = 0; peer < size_; ++peer) {
      int available = 0;
      CHECK(tcaPathAvailable(TCA_PATH_CUDA, peer, &available));
      if (!available) continue;
      size_t crossover = 0;
      CHECK(tcaCudaCrossover(peer, &crossover));
      fmt::print(g_text, "  to rank {}: copy engines at every size from {}\n", peer,
                 crossover == SIZE_MAX ? std::string("none (the largest take the SMs)")
                                       : size_name(crossover));
      tcaCudaCalibrationPoint points[64];
      int count = 0;
      CHECK(tcaCudaCalibration(peer, points, 64, &count));
      if (count > 0)
        fmt::print(g_text, "    {:>9}  {:>9}  {:>9}  picks  (ping-pong, GB/s)\n", "bytes", "CE",
                   "SM");
      for (int i = 0; i < count; ++i) {
        tcaPath pick = TCA_PATH_AUTO;
        CHECK(tcaCudaAutoPath(peer, points[i].bytes, &pick));
        fmt::print(g_text, "    {:>9}  {:9.2f}  {:9.2f}  {}\n", size_name(points[i].bytes),
                   points[i].copy_engine_gbps, points[i].sm_gbps,
                   pick == TCA_PATH_CUDA_CE ? "CE" : "SM");
        add_row({{"table", "auto_path"},
                 {"to", peer},
                 {"bytes", points[i].bytes},
                 {"ce_GBps", points[i].copy_engine_gbps},
                 {"sm_GBps", points[i].sm_gbps},
                 {"pick", pick == TCA_PATH_CUDA_CE ? "CE" : "SM"}});
      }
      if (count == 0) {
        for (size_t bytes = 64; bytes <= kBandwidthBytes; bytes *= 4) {
          tcaPath pick = TCA_PATH_AUTO;
          CHECK(tcaCudaAutoPath(peer, bytes, &pick));
          fmt::print(g_text, "    {:>9}  {}\n", size_name(bytes),
                     pick == TCA_PATH_CUDA_CE ? "CE" : "SM");
        }
      }
    }
  }

 private:
  // GB/s of `desc` moving `bytes`, each kick waited for before the next.
  static double one_at_a_time_rate(tcaDesc desc, size_t bytes, int kicks) {
    CHECK(tcaStartDMADesc(desc));  // warm-up
    CHECK(tcaWaitDMAC(0));
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < kicks; ++i) {
      CHECK(tcaStartDMADesc(desc));
      CHECK(tcaWaitDMAC(0));
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - begin;
    return static_cast<double>(bytes) * kicks / took.count() * 1e-9;
  }

  // GB/s of `desc` moving `bytes`, kicked `kicks` times back to back, then waited for.
  static double pipelined_rate(tcaDesc desc, size_t bytes, int kicks) {
    CHECK(tcaStartDMADesc(desc));  // warm-up
    CHECK(tcaWaitDMAC(0));
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < kicks; ++i) CHECK(tcaStartDMADesc(desc));
    CHECK(tcaWaitDMAC(0));
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - begin;
    return static_cast<double>(bytes) * kicks / took.count() * 1e-9;
  }

  double kick_rate(tcaPath path, int peer, size_t bytes, int kicks) {
    tcaDesc desc = nullptr;
    CHECK(tcaDescNew(&desc));
    CHECK(tcaDescSetMemcpy(desc, &dst_handles_[peer], 0, &src_handle_, 0, bytes, 0, 0));
    CHECK(tcaDescSetPath(desc, path));
    CHECK(tcaDescSet(desc, 0));
    const double rate = pipelined_rate(desc, bytes, kicks);
    CHECK(tcaDescFree(desc));
    return rate;
  }

  void reduce_and_print(const char* title, std::vector<double>* values, const char* format,
                        const nlohmann::ordered_json& fields, const char* value_key) {
    const std::vector<double> total = combine(*values, true);
    if (rank_ != 0) return;
    fmt::print(g_text, "\n{}\n", title);
    print_matrix_values(total, format);
    add_matrix_rows(fields, value_key, total, size_);
  }

  // Element by element over every rank's `values`: the largest, or the sum (collective).
  std::vector<double> combine(const std::vector<double>& values, bool largest) const {
    std::vector<double> all(values.size() * static_cast<size_t>(size_));
    CHECK(tcaBootstrapAllgather(values.data(), all.data(), values.size() * sizeof(double)));
    std::vector<double> total(all.begin(),
                              all.begin() + static_cast<std::ptrdiff_t>(values.size()));
    for (size_t r = 1; r < static_cast<size_t>(size_); ++r)
      for (size_t i = 0; i < values.size(); ++i) {
        const double value = all[r * values.size() + i];
        total[i] = largest ? std::max(total[i], value) : total[i] + value;
      }
    return total;
  }

  void print_matrix_values(const std::vector<double>& values, const char* format) const {
    print_matrix([&](int a, int b) {
      return a == b ? std::string("-") : fmt::format(fmt::runtime(format), values[a * size_ + b]);
    });
  }

  void print_matrix(const std::function<std::string(int, int)>& cell) const {
    fmt::print(g_text, "  {:>8}", "from\\to");
    for (int b = 0; b < size_; ++b) fmt::print(g_text, " {:>8}", fmt::format("rank {}", b));
    fmt::print(g_text, "\n");
    for (int a = 0; a < size_; ++a) {
      fmt::print(g_text, "  {:>8}", fmt::format("rank {}", a));
      for (int b = 0; b < size_; ++b) fmt::print(g_text, " {:>8}", cell(a, b));
      fmt::print(g_text, "\n");
    }
  }

  int rank_ = 0;
  int size_ = 1;
  bool constant_source_ = false;  // later bandwidths read a source of one repeated byte
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  void* src_ = nullptr;
  void* dst_ = nullptr;
  tcaHandle src_handle_{};
  std::vector<tcaHandle> dst_handles_;
};

// The options: --json, or --help. nullopt: the program goes on; else its exit code.
std::optional<int> parse(int argc, char** argv, bool* json) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      *json = true;
      continue;
    }
    const bool help = arg == "-h" || arg == "--help";
    if (tca_harness::launch_rank() == 0)
      std::fprintf(stderr,
                   "%s%s\nusage: tca-run -n N tca-topo [--json]  (or mpirun -n N tca-topo)\n"
                   "  --json  one JSON object on stdout (rows: link, latency, bandwidth, halo, "
                   "gpu_collective, block_store, auto_path), the tables on stderr\n",
                   help ? "" : "tca-topo: unknown option ", help ? "" : arg.c_str());
    return help ? 0 : 1;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  tca_harness::set_program_name("tca-topo");
  bool json = false;
  if (const std::optional<int> code = parse(argc, argv, &json)) return *code;
  CHECK(tcaInit());
  const int rank = tca_harness::job_rank();
  const int ranks = tca_harness::job_size();
  tca_harness::Report report("tca-topo", json && rank == 0);
  if (json) {
    g_text = stderr;
    g_report = rank == 0 ? &report : nullptr;
  }
  const char* bootstrap = "?";
  const char* reason = "?";
  CHECK(tcaBootstrapInfo(&bootstrap, &reason));
  if (rank == 0) fmt::print(g_text, "{} ranks, bootstrap {} ({})\n\n", ranks, bootstrap, reason);
  report.set("ranks", ranks);
  report.set("bootstrap", {{"name", bootstrap}, {"reason", reason}});
  {
    Topo topo;
    topo.print_devices_and_links();
    topo.latency_matrix(
        false, "One-way latency, us (GPU-initiated 8 B put with signal, half a round trip)");
    topo.latency_matrix(true,
                        "One-way latency, us (bare flag store, no data or ordering: reference)");
    topo.bandwidth_matrix(TCA_PATH_CUDA_CE, false,
                          "One-direction bandwidth, GB/s (copy engines, 256 MiB kicks)");
    topo.bandwidth_matrix(TCA_PATH_CUDA_SM, false,
                          "One-direction bandwidth, GB/s (SM stores, 256 MiB kicks)");
    topo.bandwidth_matrix(TCA_PATH_CUDA_CE, true,
                          "Both directions at once, GB/s (copy engines, 256 MiB kicks each way)");
    topo.bandwidth_matrix(TCA_PATH_CUDA_SM, true,
                          "Both directions at once, GB/s (SM stores, 256 MiB kicks each way)");
    topo.constant_source();
    topo.bandwidth_matrix(TCA_PATH_CUDA_CE, false,
                          "For comparison: copy engines on a constant-byte source, GB/s");
    topo.bandwidth_matrix(TCA_PATH_CUDA_SM, false,
                          "For comparison: SM stores on a constant-byte source, GB/s");
    topo.halo_planes();
    tca_tools::measure_device_programs(rank, ranks, g_text, add_row);
    topo.auto_choices();
    topo.transport_choices();
  }
  report.print();
  CHECK(tcaFinalize());
  return 0;
}
