// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "config.h"

#include <algorithm>
#include <map>
#include <thread>

#include "tca_harness/options.h"

namespace tca_cg {

const char* spmv_name(SpmvKind kind) {
  switch (kind) {
    case SpmvKind::kOwn:
      return "own";
    case SpmvKind::kSlabRows:
      return "slab-rows";
    case SpmvKind::kSlabTiles:
      return "slab-tiles";
    case SpmvKind::kCsr:
      return "csr";
    case SpmvKind::kCusparse:
      return "cusparse";
    case SpmvKind::kSymmetric:
      return "symmetric";
    case SpmvKind::kSymmetricTiles:
      return "symmetric-tiles";
  }
  return "?";
}

namespace {

template <class T>
std::vector<T> translate(const std::vector<std::string>& names,
                         const std::map<std::string, T>& table) {
  std::vector<T> out;
  for (const std::string& name : names) {
    const T value = table.at(name);
    if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
  }
  return out;
}

// --spmv-alone and its options: one process, a block that exists, no communication to choose.
void check_spmv_alone(const CLI::App& app, const Config& config, int ranks, bool chose_comm) {
  if (config.spmv_alone == 0) {
    for (const char* option : {"--spmv-block", "--spmv-calls"}) {
      if (app.count(option) > 0) throw CLI::ValidationError(option, "needs --spmv-alone");
    }
    return;
  }
  if (ranks != 1) {
    throw CLI::ValidationError(
        "--spmv-alone",
        "times one rank's block alone: run one process, not " + std::to_string(ranks));
  }
  if (config.spmv_block >= config.spmv_alone) {
    throw CLI::ValidationError("--spmv-block", "rank " + std::to_string(config.spmv_block) +
                                                   " is not below --spmv-alone " +
                                                   std::to_string(config.spmv_alone));
  }
  if (chose_comm)
    throw CLI::ValidationError("--spmv-alone",
                               "communicates nothing: drop --comm and --tca-exchange");
}

}  // namespace

std::optional<int> parse_config(int argc, char** argv, int rank, int ranks, int ranks_on_host,
                                Config* config) {
  tca_harness::Cli cli(
      "tca-cg: the conjugate gradient method over tca: the NPB CG benchmark (classes S, W, A, B, "
      "C, D) or CG on a Matrix Market matrix, on CPU threads or a GPU, with 1d or 2d partitions "
      "and tca, MPI or NCCL communication (run: mpirun -n N tca-cg --class B)");
  CLI::App& app = cli.app();
  std::string class_name;
  std::string partition = "1d";
  std::string device = "auto";
  std::vector<std::string> comms;
  std::vector<std::string> spmvs;
  double tolerance = 0, max_error = 0;
  int threads = 0;
  bool no_graph = false, no_breakdown = false, quiet = false;

  app.add_option("--class", class_name,
                 "NPB CG class: S, W, A, B, C or D (default S without --matrix)");
  app.add_option("--matrix", config->matrix_path,
                 "solve A x = b for this Matrix Market file (coordinate real, integer or pattern; "
                 "general or symmetric; SPD) instead of NPB CG");
  app.add_option("--rhs", config->rhs_path,
                 "--matrix: b from this Matrix Market file (n x 1); default b = A * ones, whose "
                 "solution ones gives the error");
  app.add_option("--iterations", config->iterations, "--matrix: at most this many CG steps")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  app.add_option("--tol", tolerance, "--matrix: stop once ||b - A x|| / ||b|| (recursive) <= this")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-error", max_error,
                 "--matrix without --rhs: exit 2 when ||x - ones|| / sqrt(n) exceeds this")
      ->check(CLI::PositiveNumber);
  app.add_option("--partition", partition,
                 "1d: rows; 2d: sqrt(P) x sqrt(P) blocks (square rank counts)")
      ->check(CLI::IsMember({"1d", "2d"}))
      ->capture_default_str();
  app.add_option("--device", device, "cpu, gpu, or auto (gpu where this rank has one)")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  cli.add_repeatable("--comm", comms,
                     "tca, mpi or nccl (GPU only); several: each in turn on the same matrix "
                     "(default tca)",
                     {"tca", "mpi", "nccl"});
  cli.add_repeatable(
      "--spmv", spmvs,
      "GPU SpMV: own (column slabs, x in shared memory; the slab kernel chosen from the "
      "block's shape), slab-rows or slab-tiles (that slab kernel forced), csr (a warp per row) "
      "or cusparse; symmetric (one rank, CPU or GPU): the upper triangle only, each entry used "
      "twice; symmetric-tiles (one rank, GPU): the upper triangle in slab tiles, x's slab and "
      "the slab's column sums in shared memory; several: each in turn (default own)",
      {"own", "slab-rows", "slab-tiles", "csr", "cusparse", "symmetric", "symmetric-tiles"});
  std::vector<std::string> variants;
  cli.add_repeatable("--cg-variant", variants,
                     "the CG recurrence: classic (NPB's: two sums over the ranks a step), "
                     "single-reduction (Chronopoulos and Gear's: the SpMV multiplies r, r.r and "
                     "w.r summed at once, A p by recurrence) or pipelined (Ghysels and "
                     "Vanroose's: the SpMV multiplies w = A r kept by recurrence, the update "
                     "forms the next step's w.r and r.r); several: each in turn (default "
                     "single-reduction on the GPU, where it is faster, classic on the CPU)",
                     {"classic", "single-reduction", "pipelined"});
  std::vector<std::string> tca_exchanges;
  cli.add_repeatable(
      "--tca-exchange", tca_exchanges,
      "--comm tca on the GPU: push (kernels store p's pieces, and 2d w's, straight into the "
      "peers' buffers through tca's device pointers; the dot products meet in mailboxes, a "
      "kernel each), fused-dots (push, with each dot product summed over the ranks by the kernel "
      "that forms it), fused (fused-dots, and with the slab SpMV the update of p stores p "
      "into the peers, the SpMV waits for theirs; 2d: the SpMV's slab sum stores w's pieces "
      "into the grid row, their sum waits for the peers' and forms p.q), coll (tca's persistent "
      "collectives, and 2d "
      "chains) or teams (2d: collectives over the grid's row and column teams); several: each "
      "in turn (default fused-dots on the GPU; the CPU takes coll or teams; where some rank's "
      "kernels cannot reach every peer, across hosts, the collectives serve instead)",
      {"push", "fused-dots", "fused", "coll", "teams"});
  std::string tca_algorithm = "auto";
  app.add_option("--tca-algorithm", tca_algorithm,
                 "--comm tca: algorithm of the collectives (1d allgather, dot allreduces)")
      ->check(CLI::IsMember(
          {"auto", "ring", "neighbor_exchange", "recursive_doubling", "dissemination", "direct"}))
      ->capture_default_str();
  app.add_option(
         "--slab-lanes", config->gpu.slab.lanes,
         "the row-group slab kernel (--spmv slab-rows, or own where chosen): threads per row, 8 "
         "(8 entries each at once), 16 or 32 (4 each); 0: 16, or 32 for rows of a slab longer than "
         "64 "
         "entries on average")
      ->check(CLI::IsMember({0, 8, 16, 32}))
      ->capture_default_str();
  bool no_prefetch = false;
  app.add_flag("--no-slab-prefetch", no_prefetch,
               "the row-group slab kernel: do not load the next row while summing one");
  app.add_option("--threads", threads, "CPU threads per rank (default: cores / ranks on this host)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--repetitions", config->repetitions,
                 "timed runs of every configuration, interleaved")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--reference-iterations", config->reference_iterations,
                 "NPB: --comm mpi (the slow reference) times only this many outer iterations, so "
                 "that a comparison of every --comm ends in time; its time per iteration compares, "
                 "its zeta is not verified (0: the class's count)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_flag("--no-graph", no_graph,
               "GPU: launch every kernel from the host instead of CUDA graphs");
  bool no_early_launch = false;
  app.add_flag("--no-early-launch", no_early_launch,
               "GPU: start each kernel only once the one before it has ended (default on compute "
               "capability 9.0 and up: launched while it runs, waiting inside for its end)");
  app.add_flag("--no-breakdown", no_breakdown,
               "GPU: skip the second run that measures the breakdown");
  app.add_flag("--kernel-times", config->kernel_times,
               "NPB on the GPU with CUDA graphs: a third run whose kernels record their own start, "
               "end and waits for the peers, summed per kernel and CG step");
  app.add_flag("--quiet", quiet, "no per-iteration lines");
  app.add_option("--spmv-alone", config->spmv_alone,
                 "no CG: time the SpMV (each --spmv and --cg-variant) of one rank's block of a run "
                 "on this many ranks, alone on this process's CPU or GPU (run one process), its "
                 "result checked against the block's row sums: a GPU's share of a several-GPU "
                 "run, measured on one (with --kernel-times also each kernel's own time)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--spmv-block", config->spmv_block, "--spmv-alone: the rank whose block is timed")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--spmv-calls", config->spmv_calls,
                 "--spmv-alone: timed calls per kernel, variant and repetition")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cli.add_json(config->json);

  auto validate = [&] {
    if (!config->matrix_path.empty() && !class_name.empty()) {
      throw CLI::ValidationError("--class and --matrix", "choose one of them");
    }
    if (config->matrix_path.empty()) {
      config->npb = find_npb_class(class_name.empty() ? "S" : class_name);
      if (!config->npb) {
        throw CLI::ValidationError(
            "--class", "unknown class '" + class_name + "' (" + npb_class_names() + ")");
      }
      if (!config->rhs_path.empty()) throw CLI::ValidationError("--rhs", "needs --matrix");
      if (tolerance > 0)
        throw CLI::ValidationError("--tol", "needs --matrix (NPB runs a fixed count)");
      if (max_error > 0) throw CLI::ValidationError("--max-error", "needs --matrix");
    } else if (max_error > 0 && !config->rhs_path.empty()) {
      throw CLI::ValidationError("--max-error", "needs the known solution: drop --rhs");
    }
    if (config->kernel_times && !config->matrix_path.empty())
      throw CLI::ValidationError("--kernel-times", "NPB only (--class)");
    if (config->kernel_times && no_graph)
      throw CLI::ValidationError("--kernel-times", "times CUDA graph replays: drop --no-graph");
    config->partition = partition == "2d" ? Partition::kTwoD : Partition::kOneD;
    check_spmv_alone(app, *config, ranks, !comms.empty() || !tca_exchanges.empty());
    // The ranks the matrix is spread over: this run's, or those --spmv-alone stands for.
    const int layout_ranks = config->spmv_alone > 0 ? config->spmv_alone : ranks;
    std::string reason;
    if (!partition_fits(config->partition, layout_ranks, &reason))
      throw CLI::ValidationError(reason);
    if (device == "auto") {
      config->device = gpu_count() > 0 ? Device::kGpu : Device::kCpu;
    } else {
      config->device = device == "gpu" ? Device::kGpu : Device::kCpu;
    }
    config->comms = translate<CommKind>(
        comms.empty() ? std::vector<std::string>{"tca"} : comms,
        {{"tca", CommKind::kTca}, {"mpi", CommKind::kMpi}, {"nccl", CommKind::kNccl}});
    config->spmvs = translate<SpmvKind>(spmvs.empty() ? std::vector<std::string>{"own"} : spmvs,
                                        {{"own", SpmvKind::kOwn},
                                         {"slab-rows", SpmvKind::kSlabRows},
                                         {"slab-tiles", SpmvKind::kSlabTiles},
                                         {"csr", SpmvKind::kCsr},
                                         {"cusparse", SpmvKind::kCusparse},
                                         {"symmetric", SpmvKind::kSymmetric},
                                         {"symmetric-tiles", SpmvKind::kSymmetricTiles}});
    config->variants = translate<CgVariant>(
        variants.empty()
            ? std::vector<std::string>{config->device == Device::kGpu ? "single-reduction"
                                                                      : "classic"}
            : variants,
        {{"classic", CgVariant::kClassic},
         {"single-reduction", CgVariant::kSingleReduction},
         {"pipelined", CgVariant::kPipelined}});
    for (SpmvKind kind : {SpmvKind::kSymmetric, SpmvKind::kSymmetricTiles}) {
      if (std::find(config->spmvs.begin(), config->spmvs.end(), kind) == config->spmvs.end())
        continue;
      const std::string option = std::string("--spmv ") + spmv_name(kind);
      if (layout_ranks != 1)
        throw CLI::ValidationError(option, "needs the whole matrix on one rank (run with 1 rank)");
      if (kind == SpmvKind::kSymmetricTiles && config->device != Device::kGpu)
        throw CLI::ValidationError(option, "needs --device gpu (the CPU has --spmv symmetric)");
    }
    config->tca_exchanges = translate<TcaExchange>(
        tca_exchanges.empty()
            ? std::vector<std::string>{config->device == Device::kGpu ? "fused-dots" : "coll"}
            : tca_exchanges,
        {{"push", TcaExchange::kPush},
         {"fused-dots", TcaExchange::kFusedDots},
         {"fused", TcaExchange::kFused},
         {"coll", TcaExchange::kColl},
         {"teams", TcaExchange::kTeams}});
    if (config->partition != Partition::kTwoD &&
        std::find(config->tca_exchanges.begin(), config->tca_exchanges.end(),
                  TcaExchange::kTeams) != config->tca_exchanges.end()) {
      throw CLI::ValidationError("--tca-exchange teams",
                                 "needs --partition 2d (1d's collectives span every rank)");
    }
    if (config->device == Device::kCpu) {
      for (TcaExchange exchange : config->tca_exchanges) {
        if (exchange != TcaExchange::kColl && exchange != TcaExchange::kTeams) {
          throw CLI::ValidationError(std::string("--tca-exchange ") + tca_exchange_name(exchange),
                                     "needs --device gpu");
        }
      }
      if (std::find(config->comms.begin(), config->comms.end(), CommKind::kNccl) !=
          config->comms.end()) {
        throw CLI::ValidationError("--comm nccl", "needs --device gpu");
      }
      if (config->kernel_times) throw CLI::ValidationError("--kernel-times", "needs --device gpu");
      for (SpmvKind kind : config->spmvs) {
        if (kind == SpmvKind::kCsr || kind == SpmvKind::kCusparse || kind == SpmvKind::kSlabRows ||
            kind == SpmvKind::kSlabTiles) {
          throw CLI::ValidationError("--spmv",
                                     "slab-rows, slab-tiles, csr and cusparse need --device gpu");
        }
      }
    }
  };
  if (std::optional<int> code = cli.parse(argc, argv, rank, validate)) return code;
  if (tolerance > 0) config->tolerance = tolerance;
  if (max_error > 0) config->max_error = max_error;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  config->threads = threads > 0 ? threads : std::max(1, cores / std::max(1, ranks_on_host));
  const std::map<std::string, int> algorithms = {
      {"auto", 0},          {"ring", 1},  {"neighbor_exchange", 2}, {"recursive_doubling", 3},
      {"dissemination", 4}, {"direct", 5}};
  config->comm.tca_algorithm = algorithms.at(tca_algorithm);
  config->graph = !no_graph;
  config->gpu.slab.prefetch = !no_prefetch;
  config->gpu.early_launch = !no_early_launch;
  config->gpu.threads = config->threads;
  config->breakdown = !no_breakdown;
  config->iterations_lines = !quiet;
  return std::nullopt;
}

}  // namespace tca_cg
