// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// What every transport does unless it has a way of its own.
#include "transport/transport.h"

#include "base/error.h"

namespace tca {

tcaResult Transport::run_now(const Transfer& transfer) {
  std::unique_ptr<PreparedRun> run;
  TCA_CHECK(prepare({transfer}, &run));
  TCA_CHECK(run->start());
  return run->wait();
}

}  // namespace tca
