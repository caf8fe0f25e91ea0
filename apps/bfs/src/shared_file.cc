// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "shared_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "agree.h"
#include "control.h"

namespace bfs {
namespace {

std::string system_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

SharedOutputFile::SharedOutputFile(const std::string& path, uint64_t bytes)
    : rank_(tca_apps::rank()), path_(path) {
  try {
    collectively([&] {
      if (rank_ != 0) return;
      temporary_ = path + ".partial." + std::to_string(getpid());
      fd_ = ::open(temporary_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      if (fd_ < 0) {
        const std::string failure = system_error("cannot create", temporary_);
        temporary_.clear();
        throw Error(failure);
      }
      if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
        throw Error(system_error("cannot size", temporary_));
    });
    int length = static_cast<int>(temporary_.size());
    tca_apps::broadcast(&length, sizeof length, 0);
    std::vector<char> name(temporary_.begin(), temporary_.end());
    name.resize(length);
    tca_apps::broadcast(name.data(), name.size(), 0);
    collectively([&] {
      if (rank_ == 0) return;
      temporary_.assign(name.begin(), name.end());
      fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) throw Error(system_error("cannot open", temporary_));
    });
  } catch (...) {
    if (fd_ >= 0) ::close(fd_);
    if (rank_ == 0 && !temporary_.empty()) ::unlink(temporary_.c_str());
    throw;
  }
}

SharedOutputFile::~SharedOutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (rank_ == 0 && !committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
}

void SharedOutputFile::write_at(uint64_t offset, const void* data, uint64_t bytes) {
  const auto* from = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const size_t piece = static_cast<size_t>(std::min<uint64_t>(bytes, uint64_t{1} << 30));
    const ssize_t written = ::pwrite(fd_, from, piece, static_cast<off_t>(offset));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw Error(system_error("cannot write", path_));
    from += written;
    offset += static_cast<uint64_t>(written);
    bytes -= static_cast<uint64_t>(written);
  }
}

void SharedOutputFile::commit() {
  collectively([&] {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw Error(system_error("cannot write", path_));
  });
  collectively([&] {
    if (rank_ == 0 && std::rename(temporary_.c_str(), path_.c_str()) != 0)
      throw Error(system_error("cannot rename " + temporary_ + " to", path_));
  });
  committed_ = true;
}

}  // namespace bfs
