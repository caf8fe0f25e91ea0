// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "run.h"

#include <algorithm>
#include <memory>

#include "agree.h"
#include "backend.h"
#include "control.h"
#include "edge_list.h"
#include "shared_file.h"
#include "tca_harness/progress.h"
#include "tca_harness/ranks.h"
#include "tca_harness/table.h"
#include "tca_harness/timer.h"

namespace bfs {
namespace {

struct World {
  int rank = 0;
  int ranks = 1;
  int ranks_on_host = 1;
};

World describe_world() {
  World world;
  world.rank = tca_apps::rank();
  world.ranks = tca_apps::size();
  world.ranks_on_host = tca_apps::ranks_on_host();
  return world;
}

bool use_gpu(const std::string& device, const World& world) {
  const bool here = device_available();
  if (device == "cpu") return false;
  if (device == "auto") return tca_apps::allreduce<int32_t>(here ? 1 : 0, tca_apps::Op::kAnd) != 0;
  agree(here ? ""
             : "--device gpu: rank " + std::to_string(world.rank) +
                   " has no GPU (or this build has no CUDA)");
  return true;
}

double max_over_ranks(double seconds) { return tca_apps::allreduce(seconds, tca_apps::Op::kMax); }

// The input tuples into the backend; fills the graph's description.
EdgeListInfo load_input(const Options& o, const World& world, Backend& backend, RunSummary& s) {
  EdgeListInfo info;
  tca_harness::Timer timer;
  if (o.edges_file.empty()) {
    const KroneckerGenerator generator(o.scale, o.edgefactor, o.seed);
    info.vertices = generator.vertices();
    info.tuples = generator.edges();
    info.share = even_share(info.tuples, world.rank, world.ranks);
    collectively([&] { backend.generate(generator, info); });
  } else {
    std::vector<Edge> edges =
        read_edges(o.edges_file, parse_edge_format(o.edge_format), o.vertices, info);
    collectively([&] { backend.take(std::move(edges), info); });
  }
  s.generation_time = max_over_ranks(timer.seconds());
  s.generated = o.edges_file.empty();
  s.vertices = info.vertices;
  s.tuples = info.tuples;
  s.scale = o.edges_file.empty() ? o.scale : 0;
  while (s.generated == false && (uint64_t{1} << s.scale) < info.vertices) ++s.scale;
  s.edgefactor =
      o.edges_file.empty() ? o.edgefactor : static_cast<int64_t>(info.tuples / info.vertices);
  return info;
}

Partition make_partition(uint64_t vertices, int ranks) {
  if (static_cast<uint64_t>(ranks) > vertices)
    throw Error(std::to_string(ranks) + " ranks for a graph of " + std::to_string(vertices) +
                " vertices: run at most one rank per vertex");
  Partition partition(vertices, ranks);
  if (partition.padded() > kMaxVertices)
    throw Error(std::to_string(vertices) + " vertices over " + std::to_string(ranks) +
                " ranks exceed the 2^32 vertex ids of the program");
  return partition;
}

struct RunContext {
  const Options& options;
  const World& world;
  Backend& backend;
  const Partition& partition;
  const std::vector<SearchKey>& keys;
  RunSummary& summary;
  std::unique_ptr<SharedOutputFile>& parents_file;
};

// Every rank's compute per level (all ranks ran the same levels): the spread over the ranks.
void spread_over_ranks(std::vector<LevelRecord>& levels, int ranks) {
  const size_t n = levels.size();
  std::vector<double> mine(n), all(n * static_cast<size_t>(ranks));
  for (size_t l = 0; l < n; ++l) mine[l] = levels[l].seconds[static_cast<int>(Phase::kCompute)];
  tca_apps::allgather(mine.data(), all.data(), n * sizeof(double));
  for (size_t l = 0; l < n; ++l) {
    LevelRecord& level = levels[l];
    level.compute_min = level.compute_max = all[l];
    level.slowest_rank = 0;
    for (int r = 1; r < ranks; ++r) {
      const double s = all[static_cast<size_t>(r) * n + l];
      level.compute_min = std::min(level.compute_min, s);
      if (s > level.compute_max) level.compute_max = s, level.slowest_rank = r;
    }
  }
}

SearchRecord search_once(RunContext& c, Engine& engine, Exchange& exchange, const SearchKey& key,
                         const SearchSettings& settings) {
  SearchRecord record;
  // One untimed round of the search's exchanges first (the counts' reduction and a frontier
  // gather; every search resets both buffers before it uses them): after a validation, several
  // milliseconds without traffic between the ranks' GPUs, the first level's exchanges took about
  // 0.3 ms more on 4 GPUs (docs/BFS.md), a cost of the idle links, not of the search.
  exchange.reduce_counts();
  exchange.gather_frontier(0);
  // The ranks start a timed search together, as the Graph500 reference code does: otherwise the
  // first level's collectives wait for the rank that finished the previous validation last.
  engine.synchronize();
  tca_apps::barrier();
  record.result = run_search(engine, exchange, key.vertex, key.degree, c.backend.total_arcs(),
                             c.partition.vertices(), settings);
  const uint64_t all_ends =
      tca_apps::allreduce<uint64_t>(engine.visited_tuple_ends(), tca_apps::Op::kSum);
  record.nedge = static_cast<int64_t>(all_ends / 2);
  record.teps = static_cast<double>(record.nedge) / record.result.seconds;
  if (c.options.levels) spread_over_ranks(record.result.per_level, c.world.ranks);
  if (!c.options.validate) return record;
  tca_harness::Timer timer;
  const Validation v = c.backend.validate(exchange, key.vertex);
  record.validate_seconds = timer.seconds();
  std::string failure;
  if (!v.ok())
    failure = "search from " + std::to_string(key.vertex) + " failed validation, checks " +
              describe_checks(v.failed) + ": " + v.detail;
  else if (v.tuples_in_tree != static_cast<uint64_t>(record.nedge))
    failure = "search from " + std::to_string(key.vertex) + ": the tree holds " +
              std::to_string(v.tuples_in_tree) + " input tuples, kernel 1 counted " +
              std::to_string(record.nedge);
  record.validated = failure.empty();
  if (!failure.empty()) c.summary.failures.push_back(failure);
  return record;
}

void write_first_parents(RunContext& c, Exchange& exchange) {
  c.parents_file = std::make_unique<SharedOutputFile>(c.options.parents_out,
                                                      c.partition.vertices() * sizeof(int64_t));
  collectively([&] {
    const std::vector<int64_t> mine = c.backend.local_parents(exchange);
    c.parents_file->write_at(c.partition.first(c.world.rank) * sizeof(int64_t), mine.data(),
                             mine.size() * sizeof(int64_t));
  });
}

CommRun run_comm(RunContext& c, CommKind kind) {
  CommRun run;
  run.comm = comm_name(kind);
  ExchangeSetup setup;
  setup.rank = c.world.rank;
  setup.partition = c.partition;
  setup.memory = c.backend.memory();
  setup.stream = c.backend.stream();
  std::unique_ptr<Exchange> exchange = make_exchange(kind, setup, run.skipped);
  if (!exchange) return run;
  std::unique_ptr<Engine> engine = c.backend.make_engine(*exchange);
  SearchSettings settings;
  settings.alpha = c.options.alpha;
  settings.beta = c.options.beta;
  settings.mode = c.options.direction == "top-down"    ? DirectionMode::kTopDown
                  : c.options.direction == "bottom-up" ? DirectionMode::kBottomUp
                                                       : DirectionMode::kAuto;
  // One search before the timed ones, not reported: the first launch of each kernel and the
  // first use of each buffer are not part of a search.
  run_search(*engine, *exchange, c.keys[0].vertex, c.keys[0].degree, c.backend.total_arcs(),
             c.partition.vertices(), settings);
  size_t count = c.keys.size();
  if (kind == CommKind::kMpi && c.options.reference_nbfs > 0)
    count = std::min(count, static_cast<size_t>(c.options.reference_nbfs));
  tca_harness::Progress progress("bfs --comm " + run.comm, count, c.world.rank == 0, 0.0);
  for (size_t i = 0; i < count; ++i) {
    SearchRecord record = search_once(c, *engine, *exchange, c.keys[i], settings);
    if (!c.options.parents_out.empty() && !c.parents_file) write_first_parents(c, *exchange);
    progress.update(i + 1, tca_harness::format("root %u: %d levels, %.3f ms, %.3f GTEPS%s",
                                               record.result.root, record.result.levels,
                                               record.result.seconds * 1e3, record.teps * 1e-9,
                                               !c.options.validate ? ""
                                               : record.validated  ? ", valid"
                                                                   : ", WRONG"));
    run.searches.push_back(std::move(record));
  }
  int valid = 0;
  for (const SearchRecord& r : run.searches) valid += r.validated ? 1 : 0;
  progress.finish(c.options.validate
                      ? tca_harness::format("done, %d of %zu valid", valid, run.searches.size())
                      : std::string("done"));
  return run;
}

}  // namespace

RunSummary run_benchmark(const Options& o) {
  const World world = describe_world();
  RunSummary s;
  s.ranks = world.ranks;
  s.seed = o.seed;
  s.validate = o.validate;
  const bool gpu = use_gpu(o.device, world);
  ThreadPool pool(o.threads > 0 ? o.threads : default_threads(world.ranks_on_host));
  std::unique_ptr<Backend> backend;
  collectively([&] {
    backend = gpu ? make_device_backend(pool, world.rank) : make_host_backend(pool, world.rank);
  });
  s.device = backend->describe();

  Partition partition;
  collectively([&] {
    partition =
        make_partition(o.edges_file.empty() ? uint64_t{1} << o.scale : o.vertices, world.ranks);
  });
  const EdgeListInfo info = load_input(o, world, *backend, s);
  if (!o.write_edges.empty()) {
    std::vector<Edge> edges;
    collectively([&] { edges = backend->host_edges(); });
    write_edges(o.write_edges, parse_edge_format(o.edge_format), edges, info);
  }

  tca_apps::barrier();
  tca_harness::Timer construction;
  backend->build(partition);
  tca_apps::barrier();
  s.construction_time = max_over_ranks(construction.seconds());
  s.arcs = backend->total_arcs();

  const bool given = !o.roots.empty() || !o.roots_file.empty();
  const std::vector<SearchKey> keys =
      given ? given_keys(partition, world.rank, o.roots, o.roots_file, backend->degrees())
            : sample_keys(partition, world.rank, o.seed, o.nbfs, backend->degrees());
  s.keys = given ? "given" : "sampled from seed " + std::to_string(o.seed);
  if (keys.empty())
    throw AgreedError("the graph has no vertex joined to another: nothing to search");

  std::unique_ptr<SharedOutputFile> parents_file;
  RunContext context{o, world, *backend, partition, keys, s, parents_file};
  std::vector<std::string> comms = o.comms.empty() ? std::vector<std::string>{"tca"} : o.comms;
  for (const std::string& name : comms) s.runs.push_back(run_comm(context, parse_comm(name)));
  if (parents_file && s.failures.empty()) parents_file->commit();
  return s;
}

}  // namespace bfs
