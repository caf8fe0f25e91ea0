// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "options.h"

namespace bfs {

void add_options(tca_harness::Cli& cli, Options& o) {
  CLI::App& app = cli.app();
  app.add_option("-s,--scale", o.scale, "SCALE: the generated graph has 2^SCALE vertices")
      ->check(CLI::Range(1, kMaxScale));
  app.add_option("-e,--edgefactor", o.edgefactor, "edges per vertex of the generated graph")
      ->check(CLI::Range(int64_t{1}, kMaxEdgefactor))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the generator and of the search keys")
      ->capture_default_str();
  app.add_option("--edges", o.edges_file,
                 "read the input tuples from FILE instead (needs --vertices)");
  app.add_option("--edge-format", o.edge_format,
                 "records of --edges and --write-edges: int64 (16 B) or packed48 (12 B)")
      ->check(CLI::IsMember({"int64", "packed48"}))
      ->capture_default_str();
  app.add_option("--vertices", o.vertices, "vertices of the --edges graph (ids 0 .. N-1)")
      ->check(CLI::Range(uint64_t{1}, kMaxVertices));
  app.add_option("--write-edges", o.write_edges, "write the input tuples to FILE (--edge-format)");
  app.add_option("--nbfs", o.nbfs, "searches (sampled search keys)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--reference-nbfs", o.reference_nbfs,
                 "searches of --comm mpi, the first N keys (0: every key), so that a slow "
                 "reference finishes beside the others; each comm's NBFS is in the output")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--root", o.roots, "search from vertex V (repeatable) instead of sampled keys");
  app.add_option("--roots", o.roots_file, "search from the vertices of FILE (one id per line)");
  cli.add_repeatable("--comm", o.comms,
                     "communication: tca (default), mpi, nccl; several run one after another "
                     "on the same graph and keys",
                     {"tca", "mpi", "nccl"});
  app.add_option("--device", o.device,
                 "cpu (host memory, threads), gpu, or auto (gpu where CUDA is built and every "
                 "rank has a GPU)")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "threads per CPU rank (0: the host's cores / its ranks)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  app.add_option("--alpha", o.alpha,
                 "top-down -> bottom-up when frontier arcs > unexplored / alpha")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--beta", o.beta, "bottom-up -> top-down when frontier < N / beta")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--direction", o.direction, "auto (heuristic), top-down or bottom-up only")
      ->check(CLI::IsMember({"auto", "top-down", "bottom-up"}))
      ->capture_default_str();
  app.add_flag("!--no-validate", o.validate, "skip the validation of the searches");
  app.add_option("--parents-out", o.parents_out,
                 "write the parent array of the first search to FILE (int64 per vertex)");
  app.add_flag("--levels", o.levels,
               "report each level (direction, frontier, times, the ranks' compute spread)");
  cli.add_json(o.json);
}

void check_options(const Options& o) {
  const bool from_file = !o.edges_file.empty();
  if (from_file && o.vertices == 0)
    throw CLI::ValidationError("--edges", "needs --vertices N (the ids are 0 .. N-1)");
  if (!from_file && o.scale == 0)
    throw CLI::ValidationError("--scale", "give --scale (generated graph) or --edges FILE");
  if (from_file && o.scale != 0)
    throw CLI::ValidationError("--scale", "--scale generates a graph; --edges reads one: not both");
  if (!from_file && o.vertices != 0) throw CLI::ValidationError("--vertices", "only with --edges");
  if (!o.write_edges.empty() && o.write_edges == o.edges_file)
    throw CLI::ValidationError("--write-edges", "would overwrite the --edges file");
}

}  // namespace bfs
