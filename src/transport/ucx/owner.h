// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// Owns one UCX handle and destroys it with `Destroy` (as base/cuda_util.h's CudaOwner does for
// CUDA's). Move-only.
#pragma once

#include <utility>

namespace tca::ucx {

template <typename Handle, void (*Destroy)(Handle)>
class UcxOwner {
 public:
  UcxOwner() = default;
  UcxOwner(UcxOwner&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UcxOwner& operator=(UcxOwner&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  UcxOwner(const UcxOwner&) = delete;
  UcxOwner& operator=(const UcxOwner&) = delete;
  ~UcxOwner() { reset(); }

  Handle get() const { return handle_; }
  // Where the UCX call that makes the handle writes it (an empty owner's).
  Handle* slot() { return &handle_; }
  void reset() {
    if (handle_ != nullptr) Destroy(std::exchange(handle_, nullptr));
  }

 private:
  Handle handle_ = nullptr;
};

}  // namespace tca::ucx
