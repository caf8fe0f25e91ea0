// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-coll: allreduce and allgather of every tca algorithm and of the automatic choice, next
// to MPI_Allreduce / MPI_Allgather (and NCCL, on GPU buffers) on the same buffers, sizes and
// ranks, in the layout of nccl-tests (size, count, type, redop, time, algbw, busbw, #wrong).
//
// size is the result's bytes (allgather: every rank's data together); count is the elements
// of the call (allgather: per rank). time is the slowest rank's mean per call, median of the
// timed batches. algbw = size / time; busbw = algbw * 2(n-1)/n (allreduce) or (n-1)/n
// (allgather), as nccl-tests. Values are small integers, exact in every type, so results are
// compared exactly: once after the timed batches, or with -c every iteration on fresh data
// (then only the calls themselves are timed).
//
// --memory gpu puts the buffers in GPU memory (tcaMalloc(TCA_MEM_GPU)), where a tca collective
// is a GPU program. It is issued host-called (tca.<alg>: tcaCollStart + tcaCollWait per call),
// stream-ordered (tca.<alg>_stream: N tcaCollStartStream back to back on one stream, one
// synchronization, time / N, as nccl-tests' eager mode) and as a graph (tca.<alg>_graph: N
// iterations captured in one CUDA graph, replayed, as nccl-tests -G). NCCL, loaded at run time,
// runs both ways (ref.nccl, ref.nccl_graph). Data is written and checked through host copies.
//
// Control between the ranks (barriers, the slowest time, the wrong elements) runs through tca's
// bootstrap, so the program needs no MPI. ref.mpi is built where MPI is (TCA_BENCH_MPI) and runs
// where an MPI launcher started the job; elsewhere it is skipped with a note saying why.
//
// This file is the driver; coll.h says which file holds each implementation.
#include <tca/tca.h>
#include <tca/tca_coll.h>
#include <tca/tca_trace.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coll.h"
#include "tca_harness/check.h"
#include "tca_harness/launch.h"
#include "tca_harness/options.h"
#include "tca_harness/ranks.h"
#include "tca_harness/report.h"
#include "tca_harness/sizes.h"
#include "tca_harness/stats.h"
#include "tca_harness/table.h"
#include "tca_harness/timer.h"

namespace tca_coll_bench {

int g_rank = 0;
int g_ranks = 1;

namespace {

// Failures print "tca-coll: rank R: ..." and end the job.
using tca_harness::check;

struct Options {
  size_t min_bytes = 8;
  size_t max_bytes = size_t{16} << 20;
  size_t factor = 2;
  int warmup = 5;
  int iterations = 0;  // 0: scaled by size
  int batches = 5;
  bool check_every_iteration = false;
  std::string collective = "all";
  std::string type = "double";
  std::string op = "sum";
  std::string transport = "auto";
  std::string memory = "cpu";
  std::vector<std::string> impls;
  bool json = false;
};

const std::map<std::string, tcaDataType> kTypeNames = {
    {"int32", TCA_INT32}, {"int64", TCA_INT64}, {"float", TCA_FLOAT}, {"double", TCA_DOUBLE}};
const std::map<std::string, tcaRedOp> kOpNames = {
    {"sum", TCA_SUM}, {"max", TCA_MAX}, {"min", TCA_MIN}};

// Default iterations per batch: about 64 MiB of results, within [20, 2000].
int iterations_for(const Options& options, size_t bytes) {
  if (options.iterations > 0) return options.iterations;
  return static_cast<int>(std::clamp<size_t>((size_t{64} << 20) / bytes, 20, 2000));
}

std::vector<size_t> sizes(const Options& options) {
  return tca_harness::size_series(options.min_bytes, options.max_bytes, options.factor);
}

// The table (stdout, or stderr with --json) and the JSON report, written by rank 0. The last
// column on GPU memory: a tca program's protocol x channels, or whether MPI was staged.
struct Output {
  Output(const Options& options, int rank)
      : table(options.json, rank == 0), report("tca-coll", rank == 0) {
    using tca_harness::Align;
    std::vector<tca_harness::Column> columns = {{"collective", 10},
                                                {"impl", 29, Align::kLeft, 3, "", "  "},
                                                {"size(B)", 12},
                                                {"count", 12, Align::kRight, 3, "(elements)"},
                                                {"type", 7},
                                                {"redop", 6},
                                                {"time(us)", 10, Align::kRight, 2},
                                                {"algbw", 8, Align::kRight, 3, "(GB/s)"},
                                                {"busbw", 8, Align::kRight, 3, "(GB/s)"},
                                                {"#wrong", 6}};
    if (options.memory == "gpu") columns.push_back({"notes", 0, Align::kLeft, 3, "", "  "});
    table.set_columns(std::move(columns));
    report.set("ranks", g_ranks);
    report.set("memory", options.memory);
  }
  tca_harness::Table table;
  tca_harness::Report report;
};

// The automatic choice over this run's sizes, as ranges of equal choice.
void print_auto_table(const Options& options, const Output& output, tcaCollKind kind,
                      tcaMemKind memory, const char* name) {
  std::string line;
  tcaCollAlgorithm current = TCA_COLL_AUTO;
  size_t range_start = 0;
  size_t previous = 0;
  auto close_range = [&] {
    if (current == TCA_COLL_AUTO) return;
    line += "  " + tca_harness::format_size(range_start) + ".." +
            tca_harness::format_size(previous) + ": " + tcaCollAlgorithmName(current) + ";";
  };
  for (size_t bytes : sizes(options)) {
    tcaCollAlgorithm choice = TCA_COLL_AUTO;
    check(tcaCollChooseAlgorithm(kind, memory, bytes, g_ranks, &choice), "tcaCollChooseAlgorithm");
    if (choice != current) {
      close_range();
      current = choice;
      range_start = bytes;
    }
    previous = bytes;
  }
  close_range();
  output.table.comment(tca_harness::format("tca.auto %s on %d ranks, %s memory:%s", name, g_ranks,
                                           options.memory.c_str(), line.c_str()));
}

// ---- the driver ----

// Seconds per call of one batch on this rank; `wrong` gathers this rank's wrong elements.
// A traced run (TCA_TRACE) marks each timed batch as the phase `phase` (tca-sim replays it).
double time_batch(Implementation& impl, const Shape& shape, const Buffers& buffers, int iterations,
                  bool check_each, int* round, size_t* wrong, const std::string& phase) {
  tca_harness::barrier();
  if (!check_each) {
    tcaTracePhaseBegin(phase.c_str());
    const double start = tca_harness::now_seconds();
    impl.run(iterations);
    const double seconds = (tca_harness::now_seconds() - start) / iterations;
    tcaTracePhaseEnd(phase.c_str());
    return seconds;
  }
  double busy = 0;
  for (int i = 0; i < iterations; ++i) {
    ++*round;
    fill_send(shape, buffers, *round);
    const double start = tca_harness::now_seconds();
    impl.run(1);
    busy += tca_harness::now_seconds() - start;
    *wrong += wrong_elements(shape, buffers, *round);
  }
  return busy / iterations;
}

Row measure(const Impl& impl_spec, const Shape& shape, const Buffers& buffers,
            const Options& options, const Context& context) {
  std::unique_ptr<Implementation> impl = open_impl(impl_spec, shape, buffers, context);
  int round = 0;
  fill_send(shape, buffers, round);
  size_t wrong = 0;
  const int iterations = iterations_for(options, shape.result_bytes());
  if (options.warmup > 0) impl->run(options.warmup);
  impl->prepare(options.check_every_iteration ? 1 : iterations);
  std::vector<double> seconds;
  const std::string phase =
      std::string(shape.kind == TCA_COLL_ALLGATHER ? "allgather." : "allreduce.") + impl_spec.name +
      "." + std::to_string(shape.result_bytes());
  for (int batch = 0; batch < options.batches; ++batch)
    seconds.push_back(time_batch(*impl, shape, buffers, iterations, options.check_every_iteration,
                                 &round, &wrong, phase));
  if (!options.check_every_iteration) wrong = wrong_elements(shape, buffers, round);

  const double slowest = tca_harness::max_over_ranks(tca_harness::median(seconds));
  const uint64_t wrong_total = tca_harness::sum_over_ranks(wrong);

  const double n = g_ranks;
  const double algbw = shape.result_bytes() / slowest / 1e9;
  const double factor = shape.kind == TCA_COLL_ALLREDUCE ? 2 * (n - 1) / n : (n - 1) / n;
  Row row{shape.kind == TCA_COLL_ALLREDUCE ? "allreduce" : "allgather",
          impl_spec.name,
          shape.result_bytes(),
          shape.count,
          options.type,
          shape.kind == TCA_COLL_ALLREDUCE ? options.op : "none",
          slowest * 1e6,
          algbw,
          algbw * factor,
          static_cast<size_t>(wrong_total)};
  impl->describe(&row);
  impl.reset();  // collective: every rank frees here
  return row;
}

// The last column on GPU memory: a tca program's protocol x channels, or whether MPI was
// staged through host memory.
std::string notes(const Row& row) {
  if (!row.protocol.empty()) return row.protocol + " x" + std::to_string(row.channels);
  if (row.staged.has_value()) return *row.staged ? "staged" : "device";
  return "";
}

void report_row(Output* output, const Row& row) {
  output->table.row({row.collective, row.impl, row.bytes, row.count, row.type, row.op, row.time_us,
                     row.algbw_GBps, row.busbw_GBps, row.wrong, notes(row)});
  nlohmann::ordered_json json_row = {{"collective", row.collective},
                                     {"impl", row.impl},
                                     {"bytes", row.bytes},
                                     {"count", row.count},
                                     {"type", row.type},
                                     {"op", row.op},
                                     {"time_us", row.time_us},
                                     {"algbw_GBps", row.algbw_GBps},
                                     {"busbw_GBps", row.busbw_GBps},
                                     {"wrong", row.wrong}};
  if (!row.protocol.empty()) {
    json_row["protocol"] = row.protocol;
    json_row["channels"] = row.channels;
  }
  if (row.staged.has_value()) json_row["staged"] = *row.staged;
  output->report.add_row(std::move(json_row));
}

void add_options(tca_harness::Cli& cli, Options& options,
                 const std::vector<std::string>& impl_names) {
  CLI::App& app = cli.app();
  cli.add_size("-b,--minbytes", options.min_bytes, "Smallest result size", 1, size_t{1} << 31);
  cli.add_size("-e,--maxbytes", options.max_bytes, "Largest result size", 1, size_t{1} << 31);
  app.add_option("-f,--stepfactor", options.factor, "Each size is the previous one times this")
      ->check(CLI::Range(size_t{2}, size_t{1024}))
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", options.warmup, "Untimed calls before each size")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-n,--iters", options.iterations,
                 "Calls per timed batch (0: 64 MiB / size, within [20, 2000])")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("-r,--batches", options.batches, "Timed batches; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("-c,--check", options.check_every_iteration,
                 "1: fresh data and a full check in every iteration (only the calls are "
                 "timed); 0: one check after the timed batches")
      ->capture_default_str();
  app.add_option("--collective", options.collective, "allreduce, allgather or all")
      ->check(CLI::IsMember({"allreduce", "allgather", "all"}))
      ->capture_default_str();
  app.add_option("-d,--datatype", options.type, "int32, int64, float or double")
      ->check(CLI::IsMember({"int32", "int64", "float", "double"}))
      ->capture_default_str();
  app.add_option("-o,--op", options.op, "Reduction of allreduce: sum, max or min")
      ->check(CLI::IsMember({"sum", "max", "min"}))
      ->capture_default_str();
  app.add_option("--transport", options.transport, "tca transport: auto, shm or mpi")
      ->check(CLI::IsMember({"auto", "shm", "mpi"}))
      ->capture_default_str();
  app.add_option("--memory", options.memory,
                 "Where the buffers live: cpu, or gpu (a GPU per rank; adds the _stream and "
                 "_graph rows and NCCL)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  cli.add_repeatable("-i,--impl", options.impls, "Only these implementations (repeatable)",
                     impl_names);
  cli.add_json(options.json);
}

bool selected(const Options& options, const Impl& impl) {
  return options.impls.empty() ||
         std::find(options.impls.begin(), options.impls.end(), impl.name) != options.impls.end();
}

// Refuses what this build or memory kind cannot run.
void validate(const Options& options) {
  if (options.min_bytes > options.max_bytes)
    throw CLI::ValidationError("--minbytes", "must not exceed --maxbytes");
  if (options.memory == "cpu") {
    std::vector<std::string> cpu_names;
    for (const Impl& impl : all_impls(TCA_MEM_CPU)) cpu_names.push_back(impl.name);
    for (const std::string& name : options.impls)
      if (std::find(cpu_names.begin(), cpu_names.end(), name) == cpu_names.end())
        throw CLI::ValidationError("--impl", name + " needs --memory gpu");
  }
  if (options.memory == "gpu" && !gpu_built())
    throw CLI::ValidationError("--memory", "gpu needs a CUDA build of tca-coll");
}

// ref.mpi's communicator where MPI runs (`missing` is ""), else the reason it is skipped. Either
// way the report says it: "mpi_reference": {"runs": ..., "reason": ...}.
void start_mpi(const std::string& missing, Context* context, Output* output) {
  open_mpi(missing, context);
  nlohmann::ordered_json field = {{"runs", missing.empty()}};
  if (!missing.empty()) field["reason"] = missing;
  output->report.set("mpi_reference", field);
}

bool wants_nccl(const Options& options, const std::vector<Impl>& impls) {
  return std::any_of(impls.begin(), impls.end(), [&](const Impl& impl) {
    return impl.source == Source::kNccl && selected(options, impl);
  });
}

// The comment lines before the table: time, tca.auto's choices over the run's sizes.
void print_head(const Options& options, const Output& output, tcaMemKind memory,
                const std::vector<tcaCollKind>& kinds) {
  output.table.comment(tca_harness::format(
      "time: slowest rank's mean per call, median of %d batches%s", options.batches,
      options.check_every_iteration ? "; -c 1: every iteration checked" : ""));
  for (tcaCollKind kind : kinds)
    print_auto_table(options, output, kind, memory,
                     kind == TCA_COLL_ALLREDUCE ? "allreduce" : "allgather");
  output.table.header();
  output.table.units();
  if (memory == TCA_MEM_GPU)
    output.table.comment(
        "notes: tca protocol x channels (tcaCollGetProtocol); ref.mpi staged "
        "through host memory, or on the device buffers");
}

// Every selected implementation at every size; returns the wrong elements of all rows.
size_t run_all(const Options& options, const std::vector<tcaCollKind>& kinds,
               const std::vector<Impl>& impls, const Buffers& buffers, const Context& context,
               Output* output) {
  const tcaDataType type = kTypeNames.at(options.type);
  const tcaRedOp op = kOpNames.at(options.op);
  const size_t element = tcaDataTypeSize(type);
  size_t total_wrong = 0;
  for (tcaCollKind kind : kinds) {
    for (const Impl& impl : impls) {
      if (!selected(options, impl)) continue;
      if (const std::string reason = skip_reason(impl, context); !reason.empty()) {
        tca_harness::skip_note(output->table, output->report, impl.name + ": skipped, " + reason);
        continue;
      }
      for (size_t bytes : sizes(options)) {
        const size_t per_rank = kind == TCA_COLL_ALLGATHER ? bytes / g_ranks : bytes;
        const Shape shape{kind, type, op, per_rank / element};
        if (shape.count == 0 || shape.count > INT_MAX) continue;
        const Row row = measure(impl, shape, buffers, options, context);
        report_row(output, row);
        total_wrong += row.wrong;
      }
    }
  }
  return total_wrong;
}

// One pair of buffers for every size: send holds the largest contribution, recv the result.
Buffers allocate_buffers(const Options& options, tcaMemKind memory,
                         std::vector<unsigned char>* host_copy) {
  Buffers buffers;
  buffers.memory = memory;
  const size_t largest = sizes(options).back();
  check(tcaMalloc(&buffers.send, largest, memory), "tcaMalloc");
  check(tcaMalloc(&buffers.recv, largest, memory), "tcaMalloc");
  host_copy->resize(memory == TCA_MEM_GPU ? largest : 0);
  buffers.host = host_copy->data();
  return buffers;
}

// Starts tca; the ranks and the transport to the next rank head the table.
void start_tca(const Options& options) {
  tcaConfig config{options.transport.c_str(), 0};
  check(tcaInitWithConfig(&config), "tcaInitWithConfig");
  g_rank = tca_harness::job_rank();
  g_ranks = tca_harness::job_size();
}

}  // namespace
}  // namespace tca_coll_bench

using namespace tca_coll_bench;

int main(int argc, char** argv) {
  // MPI only for ref.mpi, and only where an MPI launcher started the job (before tcaInit).
  const std::string mpi_missing = tca_harness::start_reference_mpi(&argc, &argv);
  tca_harness::set_program_name("tca-coll");

  std::vector<std::string> impl_names;
  for (const Impl& impl : all_impls(TCA_MEM_GPU)) impl_names.push_back(impl.name);
  tca_harness::Cli cli{
      "tca-coll: allreduce and allgather of every tca algorithm next to MPI (and NCCL on GPU "
      "memory) (run: tca-run -n N tca-coll, or mpirun -n N tca-coll)"};
  Options options;
  add_options(cli, options, impl_names);
  if (const std::optional<int> code =
          cli.parse(argc, argv, tca_harness::launch_rank(), [&] { validate(options); })) {
    tca_harness::finish_reference_mpi();
    return *code;
  }

  start_tca(options);
  const tcaMemKind memory = options.memory == "gpu" ? TCA_MEM_GPU : TCA_MEM_CPU;
  std::vector<tcaCollKind> kinds;
  if (options.collective != "allgather") kinds.push_back(TCA_COLL_ALLREDUCE);
  if (options.collective != "allreduce") kinds.push_back(TCA_COLL_ALLGATHER);
  const std::vector<Impl> impls = all_impls(memory);

  const char* transport = "self";
  if (g_ranks > 1) check(tcaPeerTransport((g_rank + 1) % g_ranks, &transport), "tcaPeerTransport");
  Output output(options, g_rank);
  const char* bootstrap = "?";
  check(tcaBootstrapInfo(&bootstrap, nullptr), "tcaBootstrapInfo");
  output.table.comment(tca_harness::format(
      "tca-coll %d.%d: %d ranks, tca transport %s (to the next rank), bootstrap %s",
      TCA_VERSION_MAJOR, TCA_VERSION_MINOR, g_ranks, transport, bootstrap));
  output.report.set("bootstrap", bootstrap);
  Context context;
  start_mpi(mpi_missing, &context, &output);
  if (memory == TCA_MEM_GPU && !open_gpu(output.table, wants_nccl(options, impls), &context)) {
    close_mpi();
    check(tcaFinalize(), "tcaFinalize");
    tca_harness::finish_reference_mpi();
    return 1;
  }

  std::vector<unsigned char> host_copy;
  const Buffers buffers = allocate_buffers(options, memory, &host_copy);
  print_head(options, output, memory, kinds);
  const size_t total_wrong = run_all(options, kinds, impls, buffers, context, &output);
  if (options.json) output.report.print();

  tca_harness::barrier();
  close_nccl_library();
  check(tcaFree(buffers.send), "tcaFree");
  check(tcaFree(buffers.recv), "tcaFree");
  close_mpi();
  check(tcaFinalize(), "tcaFinalize");
  tca_harness::finish_reference_mpi();
  return total_wrong == 0 ? 0 : 2;
}
