// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
#include "base/host_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "base/error.h"

namespace tca {
namespace {
size_t page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}
size_t round_up_pages(size_t bytes) {
  const size_t page = page_size();
  return (bytes + page - 1) / page * page;
}
}  // namespace

std::string host_memfd_name(uint64_t job_key, int owner, uint32_t serial) {
  return fmt::format("tca.{:016x}.{}.{}", job_key, owner, serial);
}

tcaResult check_read_write_mapped(uintptr_t begin, size_t bytes) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr)
    TCA_FAIL(TCA_ERROR_TRANSPORT, "cannot read /proc/self/maps: {}", std::strerror(errno));
  // Mappings are listed in address order: walk them, extending the covered prefix.
  const uintptr_t end = begin + bytes;
  uintptr_t covered = begin;
  char line[512];
  while (covered < end && std::fgets(line, sizeof(line), maps) != nullptr) {
    unsigned long first = 0, last = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &first, &last, perms) != 3) continue;
    if (last <= covered) continue;
    if (first > covered || perms[0] != 'r' || perms[1] != 'w') break;  // a hole, or read-only
    covered = last;
  }
  std::fclose(maps);
  if (covered < end)
    TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT,
             "[{:#x}, {:#x}) is not readable and writable memory of "
             "this process (from {:#x} on)",
             begin, end, covered);
  return TCA_SUCCESS;
}

tcaResult HostBlock::create(size_t bytes, const char* name, HostBlock* out) {
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "host block of 0 bytes");
  if (bytes > SIZE_MAX - page_size()) TCA_FAIL(TCA_ERROR_SIZE_OVERFLOW, "{} bytes", bytes);
  const size_t length = round_up_pages(bytes);
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) TCA_FAIL(TCA_ERROR_OUT_OF_RESOURCES, "memfd_create: {}", std::strerror(errno));
  struct stat status {};
  if (fchmod(fd, S_IRUSR | S_IWUSR) != 0 || fstat(fd, &status) != 0) {
    const int saved = errno;
    close(fd);
    TCA_FAIL(TCA_ERROR_TRANSPORT, "memfd {}: {}", name, std::strerror(saved));
  }
  if (ftruncate(fd, static_cast<off_t>(length)) != 0) {
    const int saved = errno;
    close(fd);
    TCA_FAIL(TCA_ERROR_OUT_OF_MEMORY, "ftruncate memfd to {} bytes: {}", length,
             std::strerror(saved));
  }
  void* data = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    const int saved = errno;
    close(fd);
    TCA_FAIL(TCA_ERROR_OUT_OF_MEMORY, "mmap {} bytes: {}", length, std::strerror(saved));
  }
  out->release();
  out->data_ = static_cast<unsigned char*>(data);
  out->bytes_ = length;
  out->fd_ = fd;
  out->inode_ = static_cast<uint64_t>(status.st_ino);
  return TCA_SUCCESS;
}

HostBlock::HostBlock(HostBlock&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      fd_(std::exchange(other.fd_, -1)),
      inode_(std::exchange(other.inode_, 0)) {}

HostBlock& HostBlock::operator=(HostBlock&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    fd_ = std::exchange(other.fd_, -1);
    inode_ = std::exchange(other.inode_, 0);
  }
  return *this;
}

HostBlock::~HostBlock() { release(); }

void HostBlock::release() {
  if (data_ != nullptr) munmap(data_, bytes_);
  if (fd_ >= 0) close(fd_);
  data_ = nullptr;
  bytes_ = 0;
  fd_ = -1;
  inode_ = 0;
}

tcaResult PeerMapping::open(int pid, int fd, uint64_t offset, uint64_t bytes,
                            const char* expected_name, uint64_t expected_inode, PeerMapping* out) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  char target[512] = {};
  const ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
  // The kernel shows a memfd as "/memfd:<name> (deleted)": the whole name must match, so that
  // serial 1 never matches 10.
  const std::string want = std::string("/memfd:") + expected_name;
  const std::string seen = n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
  if (seen != want && seen != want + " (deleted)")
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "{} is not the memfd {} (owner freed it?)", path, want);
  const int local_fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (local_fd < 0)
    TCA_FAIL(errno == ENOENT ? TCA_ERROR_FREED_HANDLE : TCA_ERROR_TRANSPORT, "open {}: {}", path,
             std::strerror(errno));
  struct stat status {};
  const bool stat_ok = fstat(local_fd, &status) == 0;
  const uint64_t file_bytes = stat_ok ? static_cast<uint64_t>(status.st_size) : 0;
  if (!stat_ok || status.st_ino != expected_inode || offset > file_bytes ||
      bytes > file_bytes - offset) {
    close(local_fd);
    TCA_FAIL(TCA_ERROR_FREED_HANDLE,
             "{} is not the memfd {} of inode {} holding [{}, {}) (owner "
             "freed it?)",
             path, want, expected_inode, offset, offset + bytes);
  }
  const uint64_t page_offset = offset / page_size() * page_size();
  const size_t length = round_up_pages(static_cast<size_t>(offset - page_offset + bytes));
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, local_fd,
                    static_cast<off_t>(page_offset));
  const int saved = errno;
  close(local_fd);  // the mapping keeps the memory alive
  if (base == MAP_FAILED)
    TCA_FAIL(TCA_ERROR_TRANSPORT, "mmap of {} ({} bytes): {}", path, length, std::strerror(saved));
  out->release();
  out->base_ = base;
  out->length_ = length;
  out->data_ = static_cast<unsigned char*>(base) + (offset - page_offset);
  return TCA_SUCCESS;
}

PeerMapping::PeerMapping(PeerMapping&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      data_(std::exchange(other.data_, nullptr)) {}

PeerMapping& PeerMapping::operator=(PeerMapping&& other) noexcept {
  if (this != &other) {
    release();
    base_ = std::exchange(other.base_, nullptr);
    length_ = std::exchange(other.length_, 0);
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

PeerMapping::~PeerMapping() { release(); }

void PeerMapping::release() {
  if (base_ != nullptr) munmap(base_, length_);
  base_ = nullptr;
  length_ = 0;
  data_ = nullptr;
}

}  // namespace tca
