// tca-coll: allreduce and allgather of every tca algorithm and of the automatic choice, next
// to MPI_Allreduce / MPI_Allgather on the same buffers, sizes and ranks, in the layout of
// nccl-tests (size, count, type, redop, time, algbw, busbw, #wrong).
//
// size is the result's bytes (allgather: every rank's data together); count is the elements
// of the call (allgather: per rank). time is the slowest rank's mean per call, median of the
// timed batches. algbw = size / time; busbw = algbw * 2(n-1)/n (allreduce) or (n-1)/n
// (allgather), as nccl-tests. Values are small integers, exact in every type, so results are
// compared exactly: once after the timed batches, or with -c every iteration on fresh data
// (then only the calls themselves are timed).
#include <mpi.h>
#include <tca/tca.h>
#include <tca/tca_coll.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

int g_rank = 0;
int g_ranks = 1;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "tca-coll: rank %d: %s\n", g_rank, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void check(tcaResult result, const char* call) {
  if (result == TCA_SUCCESS) return;
  const std::string detail = tcaGetLastErrorMessage();
  die(std::string(call) + ": " + (detail.empty() ? tcaGetErrorString(result) : detail));
}

// ---- data: small integers, exact in every type ----

int64_t contribution(int rank, size_t i, int round) {
  return static_cast<int64_t>((rank * 37 + i * 11 + round * 23) % 101) - 40;
}

int64_t reduced(tcaRedOp op, size_t i, int round) {
  int64_t result = contribution(0, i, round);
  for (int r = 1; r < g_ranks; ++r) {
    const int64_t value = contribution(r, i, round);
    result = op == TCA_SUM   ? result + value
             : op == TCA_MAX ? std::max(result, value)
                             : std::min(result, value);
  }
  return result;
}

template <typename T>
void fill_typed(void* buffer, size_t count, int rank, int round) {
  T* values = static_cast<T*>(buffer);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(contribution(rank, i, round));
}

template <typename T, typename Expected>
size_t count_wrong_typed(const void* buffer, size_t count, Expected expected) {
  const T* values = static_cast<const T*>(buffer);
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += values[i] != static_cast<T>(expected(i));
  return wrong;
}

void fill(tcaDataType type, void* buffer, size_t count, int rank, int round) {
  switch (type) {
    case TCA_INT32:
      fill_typed<int32_t>(buffer, count, rank, round);
      break;
    case TCA_INT64:
      fill_typed<int64_t>(buffer, count, rank, round);
      break;
    case TCA_FLOAT:
      fill_typed<float>(buffer, count, rank, round);
      break;
    case TCA_DOUBLE:
      fill_typed<double>(buffer, count, rank, round);
      break;
  }
}

template <typename Expected>
size_t count_wrong(tcaDataType type, const void* buffer, size_t count, Expected expected) {
  switch (type) {
    case TCA_INT32:
      return count_wrong_typed<int32_t>(buffer, count, expected);
    case TCA_INT64:
      return count_wrong_typed<int64_t>(buffer, count, expected);
    case TCA_FLOAT:
      return count_wrong_typed<float>(buffer, count, expected);
    case TCA_DOUBLE:
      return count_wrong_typed<double>(buffer, count, expected);
  }
  return count;
}

// ---- what is measured ----

struct Shape {
  tcaCollKind kind;
  tcaDataType type;
  tcaRedOp op;
  size_t count;  // elements of the call (allgather: per rank)
  size_t send_bytes() const { return count * tcaDataTypeSize(type); }
  size_t result_bytes() const {
    return send_bytes() * (kind == TCA_COLL_ALLGATHER ? static_cast<size_t>(g_ranks) : 1);
  }
};

struct Buffers {
  void* send = nullptr;
  void* recv = nullptr;
};

// Elements of this rank's result that are wrong after iteration `round`.
size_t wrong_elements(const Shape& shape, const Buffers& buffers, int round) {
  if (shape.kind == TCA_COLL_ALLREDUCE)
    return count_wrong(shape.type, buffers.recv, shape.count,
                       [&](size_t i) { return reduced(shape.op, i, round); });
  size_t wrong = 0;
  for (int from = 0; from < g_ranks; ++from)
    wrong += count_wrong(
        shape.type, static_cast<const unsigned char*>(buffers.recv) + from * shape.send_bytes(),
        shape.count, [&](size_t i) { return contribution(from, i, round); });
  return wrong;
}

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual void run() = 0;  // one call
};

class TcaCollective final : public Implementation {
 public:
  TcaCollective(const Shape& shape, const Buffers& buffers, tcaCollAlgorithm algorithm) {
    tcaCollConfig config{};
    config.algorithm = algorithm;
    check(tcaCollNew(&coll_, shape.kind, shape.type, shape.op, shape.count, buffers.send,
                     buffers.recv, &config),
          "tcaCollNew");
  }
  ~TcaCollective() override { check(tcaCollFree(coll_), "tcaCollFree"); }
  void run() override {
    check(tcaCollStart(coll_), "tcaCollStart");
    check(tcaCollWait(coll_), "tcaCollWait");
  }

 private:
  tcaColl coll_ = nullptr;
};

MPI_Datatype mpi_type(tcaDataType type) {
  switch (type) {
    case TCA_INT32:
      return MPI_INT32_T;
    case TCA_INT64:
      return MPI_INT64_T;
    case TCA_FLOAT:
      return MPI_FLOAT;
    case TCA_DOUBLE:
      return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(tcaRedOp op) {
  switch (op) {
    case TCA_SUM:
      return MPI_SUM;
    case TCA_MAX:
      return MPI_MAX;
    case TCA_MIN:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

class MpiCollective final : public Implementation {
 public:
  MpiCollective(const Shape& shape, const Buffers& buffers, MPI_Comm comm)
      : shape_(shape), buffers_(buffers), comm_(comm) {}
  void run() override {
    const int count = static_cast<int>(shape_.count);
    if (shape_.kind == TCA_COLL_ALLREDUCE)
      MPI_Allreduce(buffers_.send, buffers_.recv, count, mpi_type(shape_.type), mpi_op(shape_.op),
                    comm_);
    else
      MPI_Allgather(buffers_.send, count, mpi_type(shape_.type), buffers_.recv, count,
                    mpi_type(shape_.type), comm_);
  }

 private:
  Shape shape_;
  Buffers buffers_;
  MPI_Comm comm_;
};

struct Impl {
  std::string name;            // "tca.ring", "tca.auto", "ref.mpi"
  tcaCollAlgorithm algorithm;  // tca only
  bool is_mpi;
};

std::vector<Impl> all_impls() {
  std::vector<Impl> impls;
  for (int a = TCA_COLL_RING; a < TCA_COLL_ALGORITHMS; ++a) {
    const auto algorithm = static_cast<tcaCollAlgorithm>(a);
    impls.push_back({std::string("tca.") + tcaCollAlgorithmName(algorithm), algorithm, false});
  }
  impls.push_back({"tca.auto", TCA_COLL_AUTO, false});
  impls.push_back({"ref.mpi", TCA_COLL_AUTO, true});
  return impls;
}

// ---- options and output ----

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
  std::vector<size_t> result;
  for (size_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= options.factor) {
    result.push_back(bytes);
    if (bytes > options.max_bytes / options.factor) break;
  }
  return result;
}

void print_line(const Options& options, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void print_line(const Options& options, const char* format, ...) {
  if (g_rank != 0) return;
  FILE* stream = options.json ? stderr : stdout;  // stdout carries the JSON then
  va_list args;
  va_start(args, format);
  std::vfprintf(stream, format, args);
  va_end(args);
  std::fputc('\n', stream);
  std::fflush(stream);
}

std::string human_bytes(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + units[unit];
}

// The automatic choice over this run's sizes, as ranges of equal choice.
void print_auto_table(const Options& options, tcaCollKind kind, const char* name) {
  std::string line;
  tcaCollAlgorithm current = TCA_COLL_AUTO;
  size_t range_start = 0;
  size_t previous = 0;
  auto close_range = [&] {
    if (current == TCA_COLL_AUTO) return;
    line += "  " + human_bytes(range_start) + ".." + human_bytes(previous) + ": " +
            tcaCollAlgorithmName(current) + ";";
  };
  for (size_t bytes : sizes(options)) {
    tcaCollAlgorithm choice = TCA_COLL_AUTO;
    check(tcaCollChooseAlgorithm(kind, bytes, g_ranks, &choice), "tcaCollChooseAlgorithm");
    if (choice != current) {
      close_range();
      current = choice;
      range_start = bytes;
    }
    previous = bytes;
  }
  close_range();
  print_line(options, "# tca.auto %s on %d ranks:%s", name, g_ranks, line.c_str());
}

struct Row {
  std::string collective;
  std::string impl;
  size_t bytes;
  size_t count;
  std::string type;
  std::string op;
  double time_us;
  double algbw_GBps;
  double busbw_GBps;
  size_t wrong;
};

// ---- the driver ----

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// Seconds per call of one batch on this rank; `wrong` gathers this rank's wrong elements.
double time_batch(Implementation& impl, const Shape& shape, const Buffers& buffers, int iterations,
                  bool check_each, int* round, size_t* wrong, MPI_Comm comm) {
  MPI_Barrier(comm);
  if (!check_each) {
    const double start = seconds_now();
    for (int i = 0; i < iterations; ++i) impl.run();
    return (seconds_now() - start) / iterations;
  }
  double busy = 0;
  for (int i = 0; i < iterations; ++i) {
    ++*round;
    fill(shape.type, buffers.send, shape.count, g_rank, *round);
    const double start = seconds_now();
    impl.run();
    busy += seconds_now() - start;
    *wrong += wrong_elements(shape, buffers, *round);
  }
  return busy / iterations;
}

Row measure(const Impl& impl_spec, const Shape& shape, const Buffers& buffers,
            const Options& options, MPI_Comm comm) {
  std::unique_ptr<Implementation> impl;
  if (impl_spec.is_mpi)
    impl = std::make_unique<MpiCollective>(shape, buffers, comm);
  else
    impl = std::make_unique<TcaCollective>(shape, buffers, impl_spec.algorithm);
  int round = 0;
  fill(shape.type, buffers.send, shape.count, g_rank, round);
  size_t wrong = 0;
  const int iterations = iterations_for(options, shape.result_bytes());
  for (int i = 0; i < options.warmup; ++i) impl->run();
  std::vector<double> seconds;
  for (int batch = 0; batch < options.batches; ++batch)
    seconds.push_back(time_batch(*impl, shape, buffers, iterations, options.check_every_iteration,
                                 &round, &wrong, comm));
  if (!options.check_every_iteration) wrong = wrong_elements(shape, buffers, round);
  impl.reset();  // collective: every rank frees here

  double mine = median(seconds);
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  unsigned long long wrong_here = wrong;
  unsigned long long wrong_total = 0;
  MPI_Allreduce(&wrong_here, &wrong_total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);

  const double n = g_ranks;
  const double algbw = shape.result_bytes() / slowest / 1e9;
  const double factor = shape.kind == TCA_COLL_ALLREDUCE ? 2 * (n - 1) / n : (n - 1) / n;
  return Row{shape.kind == TCA_COLL_ALLREDUCE ? "allreduce" : "allgather",
             impl_spec.name,
             shape.result_bytes(),
             shape.count,
             options.type,
             shape.kind == TCA_COLL_ALLREDUCE ? options.op : "none",
             slowest * 1e6,
             algbw,
             algbw * factor,
             static_cast<size_t>(wrong_total)};
}

void print_row(const Options& options, const Row& row) {
  print_line(options, "%10s  %-23s %12zu %12zu %7s %6s %10.2f %8.3f %8.3f %6zu",
             row.collective.c_str(), row.impl.c_str(), row.bytes, row.count, row.type.c_str(),
             row.op.c_str(), row.time_us, row.algbw_GBps, row.busbw_GBps, row.wrong);
}

void print_json(const std::vector<Row>& rows) {
  nlohmann::ordered_json json_rows = nlohmann::ordered_json::array();
  for (const Row& row : rows)
    json_rows.push_back({{"collective", row.collective},
                         {"impl", row.impl},
                         {"bytes", row.bytes},
                         {"count", row.count},
                         {"type", row.type},
                         {"op", row.op},
                         {"time_us", row.time_us},
                         {"algbw_GBps", row.algbw_GBps},
                         {"busbw_GBps", row.busbw_GBps},
                         {"wrong", row.wrong}});
  const nlohmann::ordered_json document = {
      {"benchmark", "tca-coll"}, {"ranks", g_ranks}, {"rows", json_rows}};
  std::cout << document.dump(2) << std::endl;
}

void add_options(CLI::App& app, Options& options, const std::vector<std::string>& impl_names) {
  app.add_option("-b,--minbytes", options.min_bytes, "Smallest result size")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(size_t{1}, size_t{1} << 31))
      ->capture_default_str();
  app.add_option("-e,--maxbytes", options.max_bytes, "Largest result size")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(size_t{1}, size_t{1} << 31))
      ->capture_default_str();
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
  app.add_option("-i,--impl", options.impls, "Only these implementations (repeatable)")
      ->check(CLI::IsMember(impl_names));
  app.add_flag("--json", options.json, "Print one JSON object on stdout (the table on stderr)");
}

}  // namespace

int main(int argc, char** argv) {
  // The program owns MPI (for its reference rows); tca leaves MPI's lifetime to it.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_ranks);

  std::vector<std::string> impl_names;
  for (const Impl& impl : all_impls()) impl_names.push_back(impl.name);
  CLI::App app{
      "tca-coll: allreduce and allgather of every tca algorithm next to MPI "
      "(run: mpirun -n N tca-coll)"};
  Options options;
  add_options(app, options, impl_names);
  try {
    app.parse(argc, argv);
    if (options.min_bytes > options.max_bytes)
      throw CLI::ValidationError("--minbytes", "must not exceed --maxbytes");
  } catch (const CLI::ParseError& error) {
    const int code = g_rank == 0 ? app.exit(error) : error.get_exit_code();
    MPI_Finalize();
    return code;
  }

  tcaConfig config{options.transport.c_str(), 0};
  check(tcaInitWithConfig(&config), "tcaInitWithConfig");
  MPI_Comm comm = MPI_COMM_NULL;  // the benchmark's own traffic
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  const tcaDataType type = kTypeNames.at(options.type);
  const tcaRedOp op = kOpNames.at(options.op);
  const size_t element = tcaDataTypeSize(type);
  std::vector<tcaCollKind> kinds;
  if (options.collective != "allgather") kinds.push_back(TCA_COLL_ALLREDUCE);
  if (options.collective != "allreduce") kinds.push_back(TCA_COLL_ALLGATHER);

  // One pair of buffers for every size: send holds the largest contribution, recv the result.
  Buffers buffers;
  const size_t largest = sizes(options).back();
  check(tcaMalloc(&buffers.send, largest, TCA_MEM_CPU), "tcaMalloc");
  check(tcaMalloc(&buffers.recv, largest, TCA_MEM_CPU), "tcaMalloc");

  const char* transport = "self";
  if (g_ranks > 1) check(tcaPeerTransport((g_rank + 1) % g_ranks, &transport), "tcaPeerTransport");
  print_line(options, "# tca-coll %d.%d: %d ranks, tca transport %s (to the next rank)",
             TCA_VERSION_MAJOR, TCA_VERSION_MINOR, g_ranks, transport);
  print_line(options, "# time: slowest rank's mean per call, median of %d batches%s",
             options.batches,
             options.check_every_iteration ? "; -c 1: every iteration checked" : "");
  for (tcaCollKind kind : kinds)
    print_auto_table(options, kind, kind == TCA_COLL_ALLREDUCE ? "allreduce" : "allgather");
  print_line(options, "# %8s  %-23s %12s %12s %7s %6s %10s %8s %8s %6s", "collective", "impl",
             "size(B)", "count", "type", "redop", "time(us)", "algbw", "busbw", "#wrong");
  print_line(options, "# %8s  %-23s %12s %12s %7s %6s %10s %8s %8s %6s", "", "", "", "(elements)",
             "", "", "", "(GB/s)", "(GB/s)", "");

  std::vector<Row> rows;
  size_t total_wrong = 0;
  for (tcaCollKind kind : kinds) {
    for (const Impl& impl : all_impls()) {
      const bool selected =
          options.impls.empty() ||
          std::find(options.impls.begin(), options.impls.end(), impl.name) != options.impls.end();
      if (!selected) continue;
      if (impl.algorithm == TCA_COLL_NEIGHBOR_EXCHANGE && g_ranks % 2 != 0) {
        print_line(options, "# %s: skipped, on an odd rank count it runs as tca.ring",
                   impl.name.c_str());
        continue;
      }
      for (size_t bytes : sizes(options)) {
        const size_t per_rank = kind == TCA_COLL_ALLGATHER ? bytes / g_ranks : bytes;
        const Shape shape{kind, type, op, per_rank / element};
        if (shape.count == 0 || shape.count > INT_MAX) continue;
        const Row row = measure(impl, shape, buffers, options, comm);
        print_row(options, row);
        total_wrong += row.wrong;
        rows.push_back(row);
      }
    }
  }
  if (g_rank == 0 && options.json) print_json(rows);

  MPI_Barrier(comm);
  check(tcaFree(buffers.send), "tcaFree");
  check(tcaFree(buffers.recv), "tcaFree");
  MPI_Comm_free(&comm);
  check(tcaFinalize(), "tcaFinalize");
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 2;
}
