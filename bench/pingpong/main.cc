// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong: half-round-trip latency and bandwidth between two ranks, for every tca path
// that connects them, next to MPI_Send/MPI_Recv and a local memcpy for reference.
//
// Every path runs the same ping-pong driver (this file; pingpong.h says which file holds each
// path): rank 0 sends and waits for the answer, rank 1 waits and answers. Latency is half a round
// trip, bandwidth is bytes/latency. Built with the CUDA transport, the GPU paths join (cuda.*, with
// "src"/"dst" memory kinds), with cudaMemcpyAsync into the peer's GPU and NCCL send/recv as
// references in the same run. Before timing a size, one seeded message goes each way into poisoned
// memory and every byte is checked, so a path that moves nothing (or the wrong bytes) cannot report
// a fast number.
//
// Control between the two ranks (barriers, agreement, handles) runs through tca's bootstrap, so
// the program needs no MPI. ref.mpi_sendrecv is built where MPI is (TCA_BENCH_MPI) and runs where
// an MPI launcher started the job; elsewhere it is skipped with a note saying why.
#include <tca/tca.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "counters.h"
#include "pingpong.h"
#include "tca_harness/check.h"
#include "tca_harness/launch.h"
#include "tca_harness/options.h"
#include "tca_harness/ranks.h"
#include "tca_harness/report.h"
#include "tca_harness/sizes.h"
#include "tca_harness/stats.h"
#include "tca_harness/table.h"
#include "tca_harness/timer.h"
#include "tca_harness/verify.h"

namespace tca_pingpong {
namespace {

// Default iterations per batch: about this many bytes each way, within [min, max].
constexpr size_t kBytesPerBatch = size_t{32} << 20;
constexpr int kMinIterations = 4;
constexpr int kMaxIterations = 1000;

// Failures print "tca-pingpong: rank R: ..." and end the job (the peer may be blocked in a wait).
using tca_harness::check;
using tca_harness::describe_failure;
using tca_harness::die;

int g_rank = 0;

using tca_harness::check_message;
using tca_harness::fill_message;
using tca_harness::poison_message;

// One message each way (just rank 0's copy for a local path) into poisoned memory. Collective;
// returns what this rank found wrong, or "".
std::string verify_once(Channel& channel, const Path& path, const Layout& layout,
                        const Endpoint& endpoint, uint64_t seed) {
  const bool local = path.local;
  const tcaMemKind src = path.src;
  const tcaMemKind dst = path.dst;
  std::string problem;
  const int directions = local ? 1 : 2;
  for (int sender = 0; sender < directions; ++sender) {
    const int receiver = local ? sender : 1 - sender;
    const uint64_t message_seed = seed * 2 + static_cast<uint64_t>(sender);
    if (endpoint.rank == sender) fill_message(src, source_of(path, endpoint), layout, message_seed);
    if (endpoint.rank == receiver) poison_message(dst, endpoint.recv_of(dst), layout);
    tca_harness::barrier();  // poisoned before anything can arrive
    if (endpoint.rank == sender) channel.send();
    if (endpoint.rank == receiver) {
      if (!local) channel.wait_for_peer();
      const std::string corruption =
          check_message(dst, endpoint.recv_of(dst), layout, message_seed);
      if (!corruption.empty())
        problem = "message from rank " + std::to_string(sender) + ": " + corruption;
    }
  }
  return problem;
}

// Seconds per message, from `iterations` steps (a step is a round trip of two messages, or
// one copy on a local path).
double time_batch(Channel& channel, bool local, int rank, int iterations) {
  if (const double seconds = channel.self_timed(rank, iterations); seconds >= 0) return seconds;
  const tca_harness::Timer timer;
  for (int i = 0; i < iterations; ++i) {
    if (local) {
      if (rank == 0) channel.send();
    } else if (rank == 0) {
      channel.send();
      channel.wait_for_peer();
    } else {
      channel.wait_for_peer();
      channel.send();
    }
  }
  return timer.seconds() / (iterations * (local ? 1.0 : 2.0));
}

// The median resists a few disturbed batches; the minimum, what the path can do undisturbed.
double summarize(const std::vector<double>& values, const std::string& statistic) {
  return statistic == "min" ? tca_harness::minimum(values) : tca_harness::median(values);
}

const char* kind_name(tcaMemKind kind) { return kind == TCA_MEM_GPU ? "gpu" : "cpu"; }

struct Options {
  size_t min_bytes = 8;
  size_t max_bytes = size_t{64} << 20;
  size_t factor = 2;
  int iterations = 0;  // 0: scaled by size
  int warmup = -1;     // -1: a tenth of the iterations
  int repetitions = 5;
  std::string statistic = "median";  // over the repetitions: "median" or "min"
  std::vector<std::string> paths;    // empty: all
  std::string counters = "env";      // tca's counters: env, off, on, both (counters.h)
  int rounds = 1;                    // runs of the paths (each counter setting), each a tcaInit
  bool json = false;
};

int iterations_for(const Options& options, size_t bytes) {
  if (options.iterations > 0) return options.iterations;
  const size_t scaled = kBytesPerBatch / bytes;
  return static_cast<int>(std::clamp<size_t>(scaled, kMinIterations, kMaxIterations));
}

int warmup_for(const Options& options, int iterations) {
  return options.warmup >= 0 ? options.warmup : std::max(1, iterations / 10);
}

std::vector<size_t> message_sizes(const Options& options) {
  return tca_harness::size_series(options.min_bytes, options.max_bytes, options.factor);
}

// The table (stdout, or stderr with --json) and the JSON report, written by rank 0. With
// --counters other than env, each row says how the counters were.
struct Output {
  Output(const Options& options, int rank)
      : table(options.json, rank == 0),
        report("tca-pingpong", rank == 0),
        counters_column(options.counters != "env") {
    std::vector<tca_harness::Column> columns = {{"path", 24, tca_harness::Align::kLeft},
                                                {"src>dst", 7, tca_harness::Align::kLeft},
                                                {"size (bytes)", 14},
                                                {"latency (us)", 14},
                                                {"bandwidth (GB/s)", 18}};
    if (counters_column) columns.push_back({"counters", 8});
    table.set_columns(columns);
    report.set("ranks", 2);
  }
  tca_harness::Table table;
  tca_harness::Report report;
  bool counters_column;
  CounterComparison comparison;
  int runs = 0;  // of the selected paths, each a tcaInit of its own
};

void print_header(const Options& options, const Output& output, const char* auto_transport,
                  int peer) {
  using tca_harness::format;
  const tca_harness::Table& table = output.table;
  const char* bootstrap = "?";
  check(tcaBootstrapInfo(&bootstrap, nullptr), "tcaBootstrapInfo");
  table.comment(format("tca-pingpong %d.%d: 2 ranks, auto transport between them: %s, bootstrap %s",
                       TCA_VERSION_MAJOR, TCA_VERSION_MINOR, auto_transport, bootstrap));
  table.comment(
      format("latency: half a round trip (ref.memcpy: one copy in rank 0), %s of %d "
             "batches",
             options.statistic.c_str(), options.repetitions));
  if (options.iterations > 0)
    table.comment(format("iterations per batch: %d", options.iterations));
  else
    table.comment(format("iterations per batch: %zu MiB / size, within [%d, %d]",
                         kBytesPerBatch >> 20, kMinIterations, kMaxIterations));
  table.comment("bandwidth: size / latency, 1 GB/s = 1e9 bytes/s");
#ifdef TCA_HARNESS_CUDA
  table.comment(
      "cuda.device_*: a batch is one kernel per rank, timed by rank 0's GPU clock from the end "
      "of its first round trip");
#endif
  table.comment(
      format("*.chain2d: blocks of min(size, %zu) bytes at a pitch of two blocks", kBlockBytes));
  table.comment("every size is verified once each way before it is timed");
  if (output.counters_column)
    table.comment(format("tca's counters: %s; %d round(s), every run a tcaInit of its own",
                         options.counters == "both"
                             ? "off and on alternating (off, on, on, off, ...)"
                             : options.counters.c_str(),
                         options.rounds));
  for (const tcaMemKind kind : {TCA_MEM_CPU, TCA_MEM_GPU}) {
    const char* name = nullptr;
    const char* sizes = nullptr;
    if (tcaAutoTransport(peer, kind, kind, 8, &name, &sizes) != TCA_SUCCESS) continue;
    const char* text = kind == TCA_MEM_GPU ? "gpu>gpu" : "cpu>cpu";
    table.comment(format("auto.chain %s: %s", text,
                         *sizes != 0 ? format("from bytes:transport %s", sizes).c_str()
                                     : format("%s at every size", name).c_str()));
  }
  table.header();
}

// "<path> <src>><dst>", as the comment lines name a path.
std::string path_label(const Path& path) {
  return path.name + " " + kind_name(path.src) + ">" + kind_name(path.dst);
}

// Both ranks run this for every path; only rank 0 reports rows (`counters`: the counter setting
// of this run, "" where the environment's). False if verification failed.
bool run_path(const Path& path, const Options& options, const Endpoint& endpoint,
              const std::string& counters, Output* output) {
  uint64_t seed = std::hash<std::string>{}(path.name);
  for (size_t bytes : message_sizes(options)) {
    if (bytes > path.max_bytes) {
      output->table.comment(tca_harness::format("%s: sizes over %zu bytes skipped",
                                                path_label(path).c_str(), path.max_bytes));
      break;
    }
    const Layout layout = path.layout(bytes);
    const std::unique_ptr<Channel> channel = path.open(layout);
    tca_harness::barrier();  // both descriptors are set before the first kick

    const std::string problem = verify_once(*channel, path, layout, endpoint, ++seed);
    if (!problem.empty())
      std::fprintf(stderr, "tca-pingpong: rank %d: %s, %zu bytes: wrong data: %s\n", endpoint.rank,
                   path_label(path).c_str(), bytes, problem.c_str());
    if (!tca_harness::all_ranks(problem.empty())) {
      output->table.comment(path_label(path) + ": abandoned, it delivered wrong data");
      return false;
    }

    const int iterations = iterations_for(options, bytes);
    const int warmup = warmup_for(options, iterations);
    if (warmup > 0) time_batch(*channel, path.local, endpoint.rank, warmup);
    std::vector<double> seconds;
    for (int repetition = 0; repetition < options.repetitions; ++repetition)
      seconds.push_back(time_batch(*channel, path.local, endpoint.rank, iterations));
    tca_harness::barrier();  // the peer is done with the descriptor before it is freed

    if (endpoint.rank == 0) {
      const double latency = summarize(seconds, options.statistic);
      const double latency_us = latency * 1e6;
      const double bandwidth_GBps = static_cast<double>(bytes) / latency / 1e9;
      const std::string kinds = std::string(kind_name(path.src)) + ">" + kind_name(path.dst);
      std::vector<tca_harness::Cell> cells = {path.name, kinds, bytes, latency_us, bandwidth_GBps};
      nlohmann::ordered_json row = {
          {"path", path.name}, {"src", kind_name(path.src)}, {"dst", kind_name(path.dst)},
          {"bytes", bytes},    {"latency_us", latency_us},   {"bandwidth_GBps", bandwidth_GBps}};
      if (output->counters_column) {
        cells.push_back(counters.empty() ? "env" : counters);
        row["counters"] = counters.empty() ? "env" : counters;
        output->comparison.add(path_label(path) + " " + std::to_string(bytes) + " B", counters,
                               latency_us);
      }
      output->table.row(cells);
      output->report.add_row(row);
    }
  }
  return true;
}

void allocate_buffers(Endpoint* endpoint, size_t bytes) {
  void* send = nullptr;
  void* recv = nullptr;
  check(tcaMalloc(&send, bytes, TCA_MEM_CPU), "tcaMalloc");
  check(tcaMalloc(&recv, bytes, TCA_MEM_CPU), "tcaMalloc");
  check(tcaCreateHandle(&endpoint->send_handle, send, bytes, TCA_MEM_CPU), "tcaCreateHandle");
  check(tcaCreateHandle(&endpoint->recv_handle, recv, bytes, TCA_MEM_CPU), "tcaCreateHandle");
  std::vector<tcaHandle> recv_handles(2);
  check(tcaAllgatherHandles(&endpoint->recv_handle, recv_handles.data()), "tcaAllgatherHandles");
  endpoint->peer_recv_handle = recv_handles[endpoint->peer];
  endpoint->send = static_cast<unsigned char*>(send);
  endpoint->recv = static_cast<unsigned char*>(recv);
  endpoint->pageable_send = std::make_unique<unsigned char[]>(bytes);
  endpoint->buffer_bytes = bytes;
  allocate_gpu_buffers(endpoint, bytes);
}

void free_buffers(Endpoint* endpoint) {
  tca_harness::barrier();  // the peer no longer writes into our buffers
  check(tcaDestroyHandle(&endpoint->send_handle), "tcaDestroyHandle");
  check(tcaDestroyHandle(&endpoint->recv_handle), "tcaDestroyHandle");
  check(tcaFree(endpoint->send), "tcaFree");
  check(tcaFree(endpoint->recv), "tcaFree");
  if (endpoint->gpu) {
    check(tcaFree(endpoint->gpu_send), "tcaFree");  // also deregisters their handles
    check(tcaFree(endpoint->gpu_recv), "tcaFree");
  }
}

// Room for the largest message in either layout.
size_t buffer_bytes_for(const Options& options) {
  size_t bytes = 0;
  for (size_t size : message_sizes(options))
    bytes = std::max({bytes, contiguous_layout(size).extent(), strided_layout(size).extent()});
  return bytes;
}

void add_options(tca_harness::Cli& cli, Options& options,
                 const std::vector<std::string>& path_names) {
  CLI::App& app = cli.app();
  cli.add_size("-b,--min-bytes", options.min_bytes, "Smallest message", 1, size_t{1} << 30);
  cli.add_size("-e,--max-bytes", options.max_bytes, "Largest message (at most 1 GiB)", 1,
               size_t{1} << 30);
  app.add_option("-f,--factor", options.factor, "Each size is the previous one times this")
      ->check(CLI::Range(size_t{2}, size_t{1024}))
      ->capture_default_str();
  app.add_option("-i,--iters", options.iterations,
                 "Round trips per timed batch (0: 32 MiB / size, within [4, 1000])")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-w,--warmup", options.warmup,
                 "Untimed round trips before each size (-1: a tenth of the iterations)")
      ->check(CLI::Range(-1, INT_MAX))
      ->capture_default_str();
  app.add_option("-r,--repetitions", options.repetitions, "Timed batches per size")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("-s,--statistic", options.statistic, "What is reported of the batches")
      ->check(CLI::IsMember({"median", "min"}))
      ->capture_default_str();
  cli.add_repeatable("-p,--path", options.paths, "Only these paths (repeatable; default all)",
                     path_names);
  app.add_option("--counters", options.counters,
                 "tca's counters in each run: as the environment says (env), off, on, or both "
                 "(off and on alternating, each run a tcaInit of its own; the end compares them)")
      ->check(CLI::IsMember({"env", "off", "on", "both"}))
      ->capture_default_str();
  app.add_option("--rounds", options.rounds,
                 "Runs of the selected paths (of each --counters setting), each a tcaInit of its "
                 "own")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cli.add_json(options.json);
}

bool selected(const Options& options, const Path& path) {
  return options.paths.empty() ||
         std::find(options.paths.begin(), options.paths.end(), path.name) != options.paths.end();
}

// Starts tca on exactly 2 ranks: the endpoint, its buffers and, where MPI runs (`mpi_missing` is
// ""), ref.mpi_sendrecv's communicator. False (after saying why) on another number of ranks.
bool start(const Options& options, const std::string& mpi_missing, const char* program,
           Endpoint* endpoint) {
  check(tcaInit(), "tcaInit");
  g_rank = tca_harness::job_rank();
  const int size = tca_harness::job_size();
  if (size != 2) {
    if (g_rank == 0)
      std::fprintf(stderr,
                   "tca-pingpong: needs exactly 2 ranks, got %d (run: tca-run -n 2 %s, or mpirun "
                   "-n 2 %s)\n",
                   size, program, program);
    check(tcaFinalize(), "tcaFinalize");
    return false;
  }
  endpoint->rank = g_rank;
  endpoint->peer = 1 - g_rank;
  endpoint->mpi_missing = mpi_missing;
  start_mpi_reference(*endpoint);
  allocate_buffers(endpoint, buffer_bytes_for(options));
  return true;
}

void finish(Endpoint* endpoint) {
  free_buffers(endpoint);
  finish_mpi_reference();
  check(tcaFinalize(), "tcaFinalize");
}

// Every selected path both ranks can run; false where one delivered wrong data.
bool run_paths(const Options& options, Endpoint& endpoint, const std::string& counters,
               Output* output) {
  bool all_verified = true;
  for (const Path& path : all_paths(endpoint)) {
    if (!selected(options, path)) continue;
    const std::string reason =
        tca_harness::agreed_reason(path.unavailable_reason(), "not available on rank 1");
    if (!reason.empty()) {
      if (output->runs == 0)  // said once
        tca_harness::skip_note(output->table, output->report,
                               path_label(path) + ": skipped, " + reason);
      continue;
    }
    all_verified = run_path(path, options, endpoint, counters, output) && all_verified;
  }
  return all_verified;
}

}  // namespace
}  // namespace tca_pingpong

using namespace tca_pingpong;

int main(int argc, char** argv) {
  // MPI only for ref.mpi_sendrecv, and only where an MPI launcher started the job (before
  // tcaInit, which then leaves MPI's lifetime to the program).
  const std::string mpi_missing = tca_harness::start_reference_mpi(&argc, &argv);
  tca_harness::set_program_name("tca-pingpong");

  Endpoint endpoint;
  std::vector<std::string> path_names;
  for (const Path& path : all_paths(endpoint)) path_names.push_back(path.name);

  tca_harness::Cli cli{
      "tca-pingpong: ping-pong latency and bandwidth of every tca path between "
      "two ranks (run: tca-run -n 2 tca-pingpong, or mpirun -n 2 tca-pingpong)"};
  Options options;
  add_options(cli, options, path_names);
  const std::optional<int> parse_end = cli.parse(argc, argv, tca_harness::launch_rank(), [&] {
    if (options.min_bytes > options.max_bytes)
      throw CLI::ValidationError("--min-bytes", "must not exceed --max-bytes");
  });
  const std::vector<std::string> runs = counter_runs(options.counters);
  if (!parse_end) set_counters(runs.front());
  if (parse_end || !start(options, mpi_missing, argv[0], &endpoint)) {
    tca_harness::finish_reference_mpi();
    return parse_end ? *parse_end : 1;
  }

  const char* auto_transport = "?";
  check(tcaPeerTransport(endpoint.peer, &auto_transport), "tcaPeerTransport");
  Output output(options, g_rank);
  nlohmann::ordered_json mpi_reference = {{"runs", mpi_missing.empty()}};
  if (!mpi_missing.empty()) mpi_reference["reason"] = mpi_missing;
  output.report.set("mpi_reference", mpi_reference);
  const char* bootstrap = "?";
  check(tcaBootstrapInfo(&bootstrap, nullptr), "tcaBootstrapInfo");
  output.report.set("bootstrap", bootstrap);
  if (output.counters_column || options.rounds > 1) {
    output.report.set("counters", options.counters);
    output.report.set("rounds", options.rounds);
  }
  print_header(options, output, auto_transport, endpoint.peer);

  bool all_verified = true;
  for (int round = 0; round < options.rounds; ++round)
    for (size_t i = 0; i < runs.size(); ++i) {
      // Odd rounds in the reverse order (off, on, on, off, ...): neither setting always runs first.
      const std::string& counters = runs[round % 2 == 0 ? i : runs.size() - 1 - i];
      if (output.runs > 0) {  // every run but the first starts tca again
        finish(&endpoint);
        set_counters(counters);
        endpoint = Endpoint();
        if (!start(options, mpi_missing, argv[0], &endpoint)) return 1;
      }
      all_verified = run_paths(options, endpoint, counters, &output) && all_verified;
      ++output.runs;
    }
  if (runs.size() > 1) output.comparison.print(output.table, output.report);
  if (options.json) output.report.print();

  finish(&endpoint);
  tca_harness::finish_reference_mpi();
  return all_verified ? 0 : 1;
}
