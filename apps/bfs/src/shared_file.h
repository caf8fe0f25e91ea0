// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A file that every rank writes a part of, which appears under its name only when all parts are
// written: rank 0 creates it under a temporary name beside the target and renames it on commit;
// if the run fails first, the temporary file is removed, so no half-written file is left.
#pragma once

#include <cstdint>
#include <string>

namespace bfs {

class SharedOutputFile {
 public:
  // Collective: creates the temporary file of `bytes` bytes and opens it on every rank.
  SharedOutputFile(const std::string& path, uint64_t bytes);
  ~SharedOutputFile();  // removes the temporary file unless committed
  SharedOutputFile(const SharedOutputFile&) = delete;
  SharedOutputFile& operator=(const SharedOutputFile&) = delete;

  // Local: writes `bytes` at `offset`; throws Error on failure.
  void write_at(uint64_t offset, const void* data, uint64_t bytes);
  // Collective: every rank's writes done and agreed on, the file takes its name.
  void commit();

 private:
  int rank_ = 0;
  std::string path_, temporary_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace bfs
