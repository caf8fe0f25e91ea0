// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The input tuples of one rank: generated (Kronecker) or read from a file, and written out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.h"
#include "kronecker.h"
#include "parallel.h"
#include "partition.h"

namespace bfs {

// The whole input as one rank sees it: how many vertices and tuples there are in all, and the
// positions of this rank's tuples in the list.
struct EdgeListInfo {
  uint64_t vertices = 0;
  uint64_t tuples = 0;
  Range share;
};

// Tuples [share.first, share.last) of the generator's list, computed by the pool's threads.
std::vector<Edge> generate_edges(const KroneckerGenerator& generator, Range share,
                                 ThreadPool& pool);

// ---- edge files ----
// int64:    16-byte records: StartVertex, EndVertex as little-endian int64.
// packed48: 12-byte records: uint32 low 32 bits of StartVertex, uint32 low 32 bits of
//           EndVertex, uint32 whose low half holds bits 32-47 of StartVertex and whose high
//           half those of EndVertex (all little-endian).
enum class EdgeFormat { kInt64, kPacked48 };

EdgeFormat parse_edge_format(const std::string& name);  // throws Error naming the value
const char* edge_format_name(EdgeFormat format);
uint64_t record_bytes(EdgeFormat format);

// Collective. Reads this rank's even share of the records of `path` (never the whole file),
// checking that the file is a whole number of records and that every id is in [0, vertices).
// `info` receives the totals and the share.
std::vector<Edge> read_edges(const std::string& path, EdgeFormat format, uint64_t vertices,
                             EdgeListInfo& info);

// Collective. Writes every rank's tuples (rank r's at positions info.share) to `path` in
// `format`; the file appears only once every rank has written its share.
void write_edges(const std::string& path, EdgeFormat format, const std::vector<Edge>& mine,
                 const EdgeListInfo& info);

// Encoding of one record (exposed for the tests).
void encode_record(EdgeFormat format, const Edge& edge, unsigned char* record);
Edge decode_record(EdgeFormat format, const unsigned char* record);

}  // namespace bfs
