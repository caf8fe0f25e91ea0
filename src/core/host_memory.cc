#include "core/host_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.h"

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

tcaResult HostBlock::create(size_t bytes, const char* name, HostBlock* out) {
  if (bytes == 0) TCA_FAIL(TCA_ERROR_INVALID_ARGUMENT, "host block of 0 bytes");
  if (bytes > SIZE_MAX - page_size()) TCA_FAIL(TCA_ERROR_SIZE_OVERFLOW, "{} bytes", bytes);
  const size_t length = round_up_pages(bytes);
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) TCA_FAIL(TCA_ERROR_OUT_OF_RESOURCES, "memfd_create: {}", std::strerror(errno));
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
  return TCA_SUCCESS;
}

HostBlock::HostBlock(HostBlock&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      fd_(std::exchange(other.fd_, -1)) {}

HostBlock& HostBlock::operator=(HostBlock&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    fd_ = std::exchange(other.fd_, -1);
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
}

tcaResult PeerMapping::open(int pid, int fd, uint64_t offset, uint64_t bytes,
                            const char* expected_name, PeerMapping* out) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  char target[256] = {};
  const ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
  const std::string want = std::string("/memfd:") + expected_name;
  if (n < 0 || std::strncmp(target, want.c_str(), want.size()) != 0)
    TCA_FAIL(TCA_ERROR_FREED_HANDLE, "{} is not the memfd {} (owner freed it?)", path, want);
  const int local_fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (local_fd < 0)
    TCA_FAIL(TCA_ERROR_TRANSPORT, "open {}: {}", path, std::strerror(errno));
  const uint64_t page_offset = offset / page_size() * page_size();
  const size_t length = round_up_pages(static_cast<size_t>(offset - page_offset + bytes));
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, local_fd,
                    static_cast<off_t>(page_offset));
  const int saved = errno;
  close(local_fd);  // the mapping keeps the memory alive
  if (base == MAP_FAILED)
    TCA_FAIL(TCA_ERROR_TRANSPORT, "mmap of {} ({} bytes): {}", path, length,
             std::strerror(saved));
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
