// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-bfs's command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tca_harness/options.h"

namespace bfs {

struct Options {
  // The graph: generated ...
  int scale = 0;
  int64_t edgefactor = 16;
  uint64_t seed = 1;
  // ... or read from a file.
  std::string edges_file;
  std::string edge_format = "int64";
  uint64_t vertices = 0;
  std::string write_edges;  // the input tuples written out, in edge_format

  // The searches.
  int nbfs = 64;
  int reference_nbfs = 0;  // searches of --comm mpi (the slow reference); 0: every key
  std::vector<int64_t> roots;
  std::string roots_file;
  std::vector<std::string> comms;  // default: tca
  std::string device = "auto";
  int threads = 0;  // per rank; 0: the host's cores shared by its ranks
  double alpha = 14;
  double beta = 24;
  std::string direction = "auto";
  bool validate = true;
  std::string parents_out;

  // The report.
  bool json = false;
  bool levels = false;
};

constexpr int kMaxScale = 32;
constexpr int64_t kMaxEdgefactor = 1024;
constexpr uint64_t kMaxVertices = uint64_t{1} << 32;

// Adds every option to `cli`; the returned function checks what CLI11 cannot (combinations).
void add_options(tca_harness::Cli& cli, Options& options);
// Throws CLI::ValidationError naming the value.
void check_options(const Options& options);

}  // namespace bfs
