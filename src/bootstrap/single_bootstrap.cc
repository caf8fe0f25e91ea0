// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// A job of one rank: what a program started without any launcher gets.
#include <cstring>

#include "base/error.h"
#include "bootstrap/bootstrap.h"

namespace tca {
namespace {

class SingleBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* name() const override { return "single"; }
  tcaResult allgather(const void* mine, void* all, size_t bytes) override {
    if (bytes > 0) std::memmove(all, mine, bytes);
    return TCA_SUCCESS;
  }
  tcaResult broadcast(void*, size_t, int root) override {
    if (root != 0) TCA_FAIL(TCA_ERROR_INVALID_RANK, "broadcast from rank {} in a job of 1", root);
    return TCA_SUCCESS;
  }
  tcaResult barrier() override { return TCA_SUCCESS; }
};

}  // namespace

tcaResult make_single_bootstrap(std::unique_ptr<Bootstrap>* out) {
  *out = std::make_unique<SingleBootstrap>();
  return TCA_SUCCESS;
}

}  // namespace tca
