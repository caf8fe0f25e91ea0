// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// How UCX failures become tcaResult: every UCX call that fails records a message naming the call
// and UCX's own status string, and the status picks the tca error code.
#pragma once

#include <ucs/type/status.h>

#include "base/error.h"

namespace tca::ucx {

// The tca error a UCX status stands for (a vanished or unreachable peer is a failed peer).
tcaResult result_of(ucs_status_t status);

}  // namespace tca::ucx

// Fails the current function when the ucs_status_t expression `call` is not UCS_OK; the message
// is the formatted rest of the arguments followed by UCX's status string.
#define TCA_UCX_CHECK(call, ...)                                                \
  do {                                                                          \
    const ucs_status_t tca_ucx_status_ = (call);                                \
    if (tca_ucx_status_ != UCS_OK)                                              \
      TCA_FAIL(::tca::ucx::result_of(tca_ucx_status_), "{} failed: {}",         \
               ::fmt::format(__VA_ARGS__), ucs_status_string(tca_ucx_status_)); \
  } while (0)
