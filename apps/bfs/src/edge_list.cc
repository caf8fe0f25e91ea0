// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "edge_list.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agree.h"
#include "control.h"
#include "shared_file.h"

namespace bfs {
namespace {

constexpr uint64_t kChunkRecords = uint64_t{1} << 20;  // records per read or write

void store_le(unsigned char* at, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) at[i] = static_cast<unsigned char>(value >> (8 * i));
}

uint64_t load_le(const unsigned char* at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(at[i]) << (8 * i);
  return value;
}

// Reads [offset, offset + bytes) of fd completely.
void read_fully(int fd, const std::string& path, uint64_t offset, unsigned char* into,
                uint64_t bytes) {
  while (bytes > 0) {
    const ssize_t got = ::pread(fd, into, static_cast<size_t>(bytes), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
    if (got == 0) throw Error("cannot read " + path + ": the file ended early");
    into += got;
    offset += static_cast<uint64_t>(got);
    bytes -= static_cast<uint64_t>(got);
  }
}

class InputFile {
 public:
  explicit InputFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
  }
  ~InputFile() { ::close(fd_); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  int fd() const { return fd_; }
  uint64_t size() const {
    struct stat status;
    if (::fstat(fd_, &status) != 0) throw Error(std::string("fstat: ") + std::strerror(errno));
    return static_cast<uint64_t>(status.st_size);
  }

 private:
  int fd_;
};

}  // namespace

std::vector<Edge> generate_edges(const KroneckerGenerator& generator, Range share,
                                 ThreadPool& pool) {
  std::vector<Edge> edges(share.size());
  pool.parallel_for(share.size(), 1 << 16, [&](uint64_t first, uint64_t last, int) {
    for (uint64_t i = first; i < last; ++i) edges[i] = generator.edge(share.first + i);
  });
  return edges;
}

EdgeFormat parse_edge_format(const std::string& name) {
  if (name == "int64") return EdgeFormat::kInt64;
  if (name == "packed48") return EdgeFormat::kPacked48;
  throw Error("unknown edge format '" + name + "' (int64 or packed48)");
}

const char* edge_format_name(EdgeFormat format) {
  return format == EdgeFormat::kInt64 ? "int64" : "packed48";
}

uint64_t record_bytes(EdgeFormat format) { return format == EdgeFormat::kInt64 ? 16 : 12; }

void encode_record(EdgeFormat format, const Edge& edge, unsigned char* record) {
  const auto u = static_cast<uint64_t>(edge.u), v = static_cast<uint64_t>(edge.v);
  if (format == EdgeFormat::kInt64) {
    store_le(record, u, 8);
    store_le(record + 8, v, 8);
    return;
  }
  store_le(record, u & 0xFFFFFFFFu, 4);
  store_le(record + 4, v & 0xFFFFFFFFu, 4);
  store_le(record + 8, ((u >> 32) & 0xFFFFu) | (((v >> 32) & 0xFFFFu) << 16), 4);
}

Edge decode_record(EdgeFormat format, const unsigned char* record) {
  if (format == EdgeFormat::kInt64)
    return Edge{static_cast<int64_t>(load_le(record, 8)),
                static_cast<int64_t>(load_le(record + 8, 8))};
  const uint64_t high = load_le(record + 8, 4);
  return Edge{static_cast<int64_t>(load_le(record, 4) | ((high & 0xFFFFu) << 32)),
              static_cast<int64_t>(load_le(record + 4, 4) | ((high >> 16) << 32))};
}

std::vector<Edge> read_edges(const std::string& path, EdgeFormat format, uint64_t vertices,
                             EdgeListInfo& info) {
  const int rank = tca_apps::rank(), ranks = tca_apps::size();
  const uint64_t record = record_bytes(format);
  std::vector<Edge> edges;
  collectively([&] {
    InputFile file(path);
    const uint64_t bytes = file.size();
    if (bytes % record != 0)
      throw Error(path + ": its size, " + std::to_string(bytes) +
                  " bytes, is not a whole number of " + std::to_string(record) + "-byte " +
                  edge_format_name(format) + " records");
    if (bytes == 0) throw Error(path + ": the file holds no edges");
    info.vertices = vertices;
    info.tuples = bytes / record;
    info.share = even_share(info.tuples, rank, ranks);
    edges.resize(info.share.size());
    std::vector<unsigned char> buffer(std::min(info.share.size(), kChunkRecords) * record);
    for (uint64_t done = 0; done < info.share.size(); done += kChunkRecords) {
      const uint64_t count = std::min(kChunkRecords, info.share.size() - done);
      read_fully(file.fd(), path, (info.share.first + done) * record, buffer.data(),
                 count * record);
      for (uint64_t i = 0; i < count; ++i) {
        const Edge edge = decode_record(format, buffer.data() + i * record);
        for (const int64_t id : {edge.u, edge.v}) {
          if (id < 0 || static_cast<uint64_t>(id) >= vertices)
            throw Error(path + ": record " + std::to_string(info.share.first + done + i) +
                        " has vertex id " + std::to_string(id) + ", outside [0, " +
                        std::to_string(vertices) + ") (--vertices " + std::to_string(vertices) +
                        ")");
        }
        edges[done + i] = edge;
      }
    }
  });
  return edges;
}

void write_edges(const std::string& path, EdgeFormat format, const std::vector<Edge>& mine,
                 const EdgeListInfo& info) {
  const uint64_t record = record_bytes(format);
  SharedOutputFile file(path, info.tuples * record);
  collectively([&] {
    std::vector<unsigned char> buffer(std::min<uint64_t>(mine.size(), kChunkRecords) * record);
    for (uint64_t done = 0; done < mine.size(); done += kChunkRecords) {
      const uint64_t count = std::min<uint64_t>(kChunkRecords, mine.size() - done);
      for (uint64_t i = 0; i < count; ++i)
        encode_record(format, mine[done + i], buffer.data() + i * record);
      file.write_at((info.share.first + done) * record, buffer.data(), count * record);
    }
  });
  file.commit();
}

}  // namespace bfs
