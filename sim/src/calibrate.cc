// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "calibrate.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "fabric.h"
#include "patterns.h"

namespace tca_sim {
namespace {

constexpr int kIterations = 4;
constexpr double KiB = 1024.0, MiB = 1024.0 * 1024.0;

std::unique_ptr<Fabric> built(const std::string& dir, const std::string& name, int nodes) {
  auto fabric = Fabric::load(dir, name);
  fabric->build(nodes);
  return fabric;
}

// One-way time of a ping-pong between nodes a and b (seconds).
double one_way(const Fabric& fabric, double bytes, MemKind kind, Op op = Op::kDma, int a = 0,
               int b = 1) {
  Job job = pingpong(bytes, kind, kIterations, op);
  job.node_of_rank = {a, b};
  return simulate(fabric, job).makespan / (2.0 * kIterations);
}

double gbps(double bytes, double seconds) { return bytes / seconds / 1e9; }

// The collective's time: the slowest rank's phase.
// Rank i sits on node placement[i] (empty: node i).
double collective(const Fabric& fabric, bool allgather, Algorithm algorithm, double bytes,
                  MemKind kind, int ranks, const std::vector<int>& placement = {}) {
  Job job = collective_job(allgather, algorithm, bytes, kind, ranks, {});
  job.node_of_rank = placement;
  return simulate(fabric, job).phases.at("coll").max_seconds;
}

// MVAPICH2's allgather of GPU buffers: the own block to host memory, the host allgather over
// InfiniBand, the whole result back to the GPU.
double mpi_gpu_allgather(const Fabric& ib, double total, int ranks) {
  return ib.cuda_copy(total / ranks) +
         collective(ib, true, Algorithm::kRecursiveDoubling, total, MemKind::kCpu, ranks) +
         ib.cuda_copy(total);
}

// Size at which `a(size) - b(size)` changes sign, by bisection on a log scale.
double crossing(const std::function<double(double)>& a, const std::function<double(double)>& b,
                double low, double high) {
  const bool low_sign = a(low) < b(low);
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(low * high);
    if ((a(mid) < b(mid)) == low_sign)
      low = mid;
    else
      high = mid;
  }
  return std::sqrt(low * high);
}

CalibrationRow value(const std::string& figure, const std::string& source, const std::string& unit,
                     double seed, double model) {
  CalibrationRow row;
  row.figure = figure;
  row.source = source;
  row.unit = unit;
  row.kind = CalibrationRow::kValue;
  row.seed = seed;
  row.model = model;
  row.error = (model - seed) / seed;
  row.pass = std::fabs(row.error) <= kCalibrationTolerance + 1e-12;
  return row;
}

CalibrationRow range(const std::string& figure, const std::string& source, const std::string& unit,
                     double low, double high, double model) {
  CalibrationRow row = value(figure, source, unit, low, model);
  row.kind = CalibrationRow::kRange;
  row.seed_high = high;
  row.error = model < low ? (model - low) / low : model > high ? (model - high) / high : 0.0;
  row.pass = std::fabs(row.error) <= kCalibrationTolerance + 1e-12;
  return row;
}

CalibrationRow at_least(const std::string& figure, const std::string& source, double bound,
                        double model) {
  CalibrationRow row = value(figure, source, "x", bound, model);
  row.kind = CalibrationRow::kAtLeast;
  row.error = model >= bound ? 0.0 : (model - bound) / bound;
  row.pass = std::fabs(row.error) <= kCalibrationTolerance + 1e-12;
  return row;
}

void ping_pong_rows(const std::string& dir, std::vector<CalibrationRow>& rows) {
  const auto peach2 = built(dir, "peach2", 2);
  const auto peach3 = built(dir, "peach3", 2);
  const auto ib = built(dir, "ib-qdr2", 2);
  const char* p2 = "001 Ping-pong Latency/Bandwidth";
  rows.push_back(value("PEACH2 PIO CPU->CPU 8 B latency", p2, "us", 0.9,
                       1e6 * one_way(*peach2, 8, MemKind::kCpu, Op::kPio)));
  rows.push_back(value("PEACH2 DMA CPU->CPU 8 B latency", p2, "us", 1.9,
                       1e6 * one_way(*peach2, 8, MemKind::kCpu)));
  rows.push_back(value("PEACH2 DMA GPU->GPU 8 B latency", p2, "us", 2.3,
                       1e6 * one_way(*peach2, 8, MemKind::kGpu)));
  rows.push_back(value("PEACH2 DMA CPU->CPU bandwidth, 4 MiB", p2, "GB/s", 3.5,
                       gbps(4 * MiB, one_way(*peach2, 4 * MiB, MemKind::kCpu))));
  rows.push_back(value("PEACH2 DMA GPU->GPU bandwidth, 4 MiB", p2, "GB/s", 2.6,
                       gbps(4 * MiB, one_way(*peach2, 4 * MiB, MemKind::kGpu))));
  rows.push_back(value("PEACH2 GPU across the Sandy Bridge socket, 4 MiB", p2, "GB/s", 0.88,
                       gbps(4 * MiB, one_way(*peach2, 4 * MiB, MemKind::kGpuFar))));
  const double p3_lat = 1e6 * one_way(*peach3, 8, MemKind::kGpu);
  rows.push_back(
      range("PEACH3 GPU->GPU 8 B latency", "000 abstract, 4.3 Fig. 5", "us", 2.0, 2.8, p3_lat));
  const double p3_512 = gbps(512 * KiB, one_way(*peach3, 512 * KiB, MemKind::kGpu));
  const double p2_512 = gbps(512 * KiB, one_way(*peach2, 512 * KiB, MemKind::kGpu));
  const double ib_512 = gbps(512 * KiB, one_way(*ib, 512 * KiB, MemKind::kGpu));
  rows.push_back(
      value("PEACH3 GPU->GPU bandwidth, 512 KiB", "000 4.3 Fig. 6", "GB/s", 3.5, p3_512));
  rows.push_back(value("PEACH3 / PEACH2 GPU->GPU bandwidth, 512 KiB", "000 abstract, 4.3", "x",
                       1.21, p3_512 / p2_512));
  rows.push_back(value("PEACH3 / MPI-IB GPU->GPU bandwidth, 512 KiB", "000 abstract, 4.3", "x",
                       1.54, p3_512 / ib_512));
  for (double size : {4 * MiB, 16 * MiB}) {
    const double p3 = gbps(size, one_way(*peach3, size, MemKind::kGpu));
    const double mpi = gbps(size, one_way(*ib, size, MemKind::kGpu));
    rows.push_back(at_least("MPI-IB / PEACH3 bandwidth at " +
                                std::to_string(static_cast<int>(size / MiB)) +
                                " MiB (MPI/IB ahead above 2 MiB)",
                            "000 4.3 Fig. 6", 1.0, mpi / p3));
  }
  rows.push_back(value("MVAPICH2-GDR GPU->GPU 8 B latency", "001 Ping-pong Latency", "us", 6.0,
                       1e6 * one_way(*ib, 8, MemKind::kGpu)));
  {
    Request r;
    r.src = 0;
    r.dst = 1;
    r.bytes = 8;
    r.src_kind = r.dst_kind = MemKind::kGpu;
    r.gdr = false;
    rows.push_back(value("MVAPICH2 1.9 GPU->GPU 8 B latency", "001 Ping-pong Latency", "us", 19.0,
                         1e6 * ib->zero_load(r)));
  }
}

void apenet_rows(const std::string& dir, std::vector<CalibrationRow>& rows) {
  const auto apenet = built(dir, "apenet", 2);
  const auto ib = built(dir, "ib-apenet-testbed", 2);
  rows.push_back(value("APEnet+ GPU->GPU 8 B latency", "004 Latency benchmark", "us", 5.4,
                       1e6 * one_way(*apenet, 8, MemKind::kGpu)));
  auto request = [](double bytes, const std::string& force) {
    Request r;
    r.src = 0;
    r.dst = 1;
    r.bytes = bytes;
    r.src_kind = r.dst_kind = MemKind::kGpu;
    r.force = force;
    return r;
  };
  const double p2p =
      crossing([&](double s) { return apenet->zero_load(request(s, "p2p")); },
               [&](double s) { return apenet->zero_load(request(s, "staged")); }, 64, 16 * MiB);
  rows.push_back(
      value("APEnet+ P2P ON/OFF threshold", "004 APEnet+ vs rest of the World", "B", 8 * KiB, p2p));
  const double over_ib = crossing([&](double s) { return apenet->zero_load(request(s, "")); },
                                  [&](double s) {
                                    Request r = request(s, "");
                                    r.gdr = false;
                                    return ib->zero_load(r);
                                  },
                                  64, 64 * MiB);
  rows.push_back(value("APEnet+ / MVAPICH2-IB threshold", "004 APEnet+ vs rest of the World", "B",
                       128 * KiB, over_ib));
}

void k40_rows(const std::string& dir, std::vector<CalibrationRow>& rows) {
  const auto k40 = built(dir, "k40-host", 8);
  const char* src = "003 p2pBandwidthLatency, K40";
  const double big = 32 * MiB;
  rows.push_back(value("K40 same switch bandwidth", src, "GB/s", 10.6,
                       gbps(big, one_way(*k40, big, MemKind::kGpu, Op::kDma, 0, 1))));
  rows.push_back(value("K40 same switch latency", src, "us", 7.7,
                       1e6 * one_way(*k40, 1, MemKind::kGpu, Op::kDma, 0, 1)));
  rows.push_back(value("K40 two switches, one CPU, bandwidth", src, "GB/s", 9.8,
                       gbps(big, one_way(*k40, big, MemKind::kGpu, Op::kDma, 0, 2))));
  rows.push_back(value("K40 two switches, one CPU, latency", src, "us", 7.9,
                       1e6 * one_way(*k40, 1, MemKind::kGpu, Op::kDma, 0, 2)));
  rows.push_back(value("K40 across QPI bandwidth", src, "GB/s", 4.0,
                       gbps(big, one_way(*k40, big, MemKind::kGpu, Op::kDma, 0, 4))));
  rows.push_back(value("K40 across QPI latency", src, "us", 32.1,
                       1e6 * one_way(*k40, 1, MemKind::kGpu, Op::kDma, 0, 4)));
}

void collective_rows(const std::string& dir, std::vector<CalibrationRow>& rows) {
  const auto peach2 = built(dir, "peach2", 16);
  const auto ib = built(dir, "ib-qdr2", 16);
  const char* ar = "002 slide 21 (Allreduce Performance)";
  const char* ag = "002 slides 16-18 (Allgather, 128 KB)";
  const int ring = peach2->dims().back();
  for (int n : {2, 4, 8, 16}) {
    // 2-16 nodes of the 2x8 torus: a 2 x n/2 block, ranks along a cycle through it.
    const std::vector<int> snake = snake_placement(ring, n);
    std::map<Algorithm, double> t;
    for (Algorithm a : all_algorithms())
      t[a] = collective(*peach2, false, a, 8, MemKind::kCpu, n, snake);
    double others = std::numeric_limits<double>::max();
    for (const auto& [a, time] : t)
      if (a != Algorithm::kDissemination) others = std::min(others, time);
    rows.push_back(
        at_least("allreduce 8 B, " + std::to_string(n) + " nodes: best other / dissemination", ar,
                 1.0, others / t[Algorithm::kDissemination]));
    const double mpi = collective(*ib, false, Algorithm::kRecursiveDoubling, 8, MemKind::kCpu, n);
    rows.push_back(
        at_least("allreduce 8 B, " + std::to_string(n) + " nodes: MPI-IB / TCA (dissemination)", ar,
                 2.0, mpi / t[Algorithm::kDissemination]));
  }
  for (int n : {2, 4, 8, 16}) {
    const std::vector<int> snake = snake_placement(ring, n);
    std::map<Algorithm, double> t;
    for (Algorithm a : all_algorithms())
      t[a] = collective(*peach2, true, a, 128 * KiB, MemKind::kGpu, n,
                        a == Algorithm::kRecursiveDoubling ? optimized_placement(ring, n) : snake);
    double others = std::numeric_limits<double>::max();
    for (const auto& [a, time] : t)
      if (a != Algorithm::kRecursiveDoubling) others = std::min(others, time);
    rows.push_back(at_least(
        "allgather 128 KiB, " + std::to_string(n) + " nodes: best other / recursive doubling", ag,
        1.0, others / t[Algorithm::kRecursiveDoubling]));
    if (n == 16) {
      const double mpi = mpi_gpu_allgather(*ib, 128 * KiB, n);
      rows.push_back(at_least("allgather 128 KiB, 16 nodes: TCA (recursive doubling) / MPI-IB", ag,
                              1.0, t[Algorithm::kRecursiveDoubling] / mpi));
      const double plain =
          collective(*peach2, true, Algorithm::kRecursiveDoubling, 128 * KiB, MemKind::kGpu, n);
      rows.push_back(at_least("allgather 128 KiB, 16 nodes: non-optimized / optimized node mapping",
                              "002 slide 17 (Impact of Node Mapping)", 1.0,
                              plain / t[Algorithm::kRecursiveDoubling]));
    }
  }
}

// One way of a ping-pong whose transfers go from `src` to `dst` memory by `path` (the rows of
// tca-pingpong: each rank sends from its own `src` buffer into the other's `dst` buffer).
double one_way_kinds(const Fabric& fabric, double bytes, MemKind src, MemKind dst,
                     const std::string& path) {
  Job job = pingpong(bytes, src, kIterations);
  for (Program& program : job.ranks)
    for (Step& step : program)
      for (Message& m : step.messages) {
        m.src_kind = src;
        m.dst_kind = dst;
        m.path = path;
      }
  return simulate(fabric, job).makespan / (2.0 * kIterations);
}

// One H200 shared by two ranks (h200-shared.fabric): tca-pingpong there, 2026-11-24 ([A]) and
// another day's run with more sizes ([B]); half a round trip in microseconds.
void shared_gpu_rows(const std::string& dir, std::vector<CalibrationRow>& rows) {
  const auto gpu = built(dir, "h200-shared", 2);
  const char* a = "tca-pingpong on one H200, 2 ranks (h200-shared.fabric [A])";
  const char* b = "tca-pingpong on one H200, 2 ranks (h200-shared.fabric [B])";
  const MemKind c = MemKind::kCpu, g = MemKind::kGpu;
  struct Row {
    const char* path;
    MemKind src, dst;
    double bytes, us;
    const char* source;
  };
  const Row measured[] = {
      {"cuda.ce", g, g, 8, 142.899, a},        {"cuda.ce", g, g, 2 * MiB, 142.868, a},
      {"cuda.ce", g, g, 16 * MiB, 154.682, a}, {"cuda.ce", g, g, 128 * MiB, 210.630, b},
      {"cuda.ce", c, g, 8, 142.644, a},        {"cuda.ce", c, g, 4 * KiB, 145.341, a},
      {"cuda.ce", c, g, 32 * KiB, 9.003, a},   {"cuda.ce", c, g, 256 * KiB, 13.882, a},
      {"cuda.ce", c, g, 2 * MiB, 47.698, a},   {"cuda.ce", c, g, 16 * MiB, 314.654, a},
      {"cuda.ce", g, c, 8, 7.107, a},          {"cuda.ce", g, c, 256 * KiB, 12.314, a},
      {"cuda.ce", g, c, 16 * MiB, 313.990, a}, {"cuda.sm", g, g, 8, 146.395, a},
      {"cuda.sm", g, g, 16 * MiB, 161.093, a}, {"cuda.sm", c, g, 8, 145.538, a},
      {"cuda.sm", c, g, 16 * MiB, 481.524, a}, {"cuda.sm", g, c, 16 * MiB, 469.796, a},
  };
  for (const Row& row : measured) {
    const std::string size =
        row.bytes >= MiB   ? std::to_string(static_cast<int>(row.bytes / MiB)) + " MiB"
        : row.bytes >= KiB ? std::to_string(static_cast<int>(row.bytes / KiB)) + " KiB"
                           : std::to_string(static_cast<int>(row.bytes)) + " B";
    const std::string figure = std::string("H200 shared ") + row.path + " " +
                               mem_kind_name(row.src) + ">" + mem_kind_name(row.dst) + " " + size +
                               " one way";
    rows.push_back(value(figure, row.source, "us", row.us,
                         1e6 * one_way_kinds(*gpu, row.bytes, row.src, row.dst, row.path)));
  }
}

void measured_rows(const std::string& dir, std::vector<CalibrationRow>& rows) {
  const auto shm = built(dir, "shm-here", 2);
  const char* src = "tca-pingpong shm.chain here (shm-here.fabric)";
  rows.push_back(
      value("shm here 8 B one way", src, "us", 0.226, 1e6 * one_way(*shm, 8, MemKind::kCpu)));
  rows.push_back(value("shm here 256 KiB one way", src, "us", 2.275,
                       1e6 * one_way(*shm, 256 * KiB, MemKind::kCpu)));
  rows.push_back(value("shm here 2 MiB one way", src, "us", 248.5,
                       1e6 * one_way(*shm, 2 * MiB, MemKind::kCpu)));
  const auto nv = built(dir, "h200-nvlink", 2);
  const char* perf = "docs/PERFORMANCE.md cuda.ce (nvidia-h200-x2)";
  rows.push_back(
      value("H200 cuda.ce 8 B one way", perf, "us", 7.42, 1e6 * one_way(*nv, 8, MemKind::kGpu)));
  rows.push_back(value("H200 cuda.ce 256 MiB", perf, "GB/s", 389.9,
                       gbps(256 * MiB, one_way(*nv, 256 * MiB, MemKind::kGpu))));
  rows.push_back(value("H200 cuda.ce 16 MiB", perf, "GB/s", 326.9,
                       gbps(16 * MiB, one_way(*nv, 16 * MiB, MemKind::kGpu))));
}

}  // namespace

std::vector<CalibrationRow> calibrate(const std::string& fabric_dir) {
  std::vector<CalibrationRow> rows;
  ping_pong_rows(fabric_dir, rows);
  apenet_rows(fabric_dir, rows);
  k40_rows(fabric_dir, rows);
  collective_rows(fabric_dir, rows);
  measured_rows(fabric_dir, rows);
  shared_gpu_rows(fabric_dir, rows);
  return rows;
}

}  // namespace tca_sim
