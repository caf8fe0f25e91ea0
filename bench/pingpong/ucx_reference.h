// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong's ref.ucx_put: UCX's own one-sided ping-pong, next to tca's paths in the same run
// (built where tca has UCX: TCA_HAVE_UCX). tca's bootstrap only exchanges worker addresses and
// remote keys.
// One message: ucp_put_nbx of the bytes, ucp_ep_flush_nbx (the bytes are at the peer), then
// ucp_put_nbx of a count into the peer's flag word; the peer polls its flag word while it
// progresses its worker (over tcp the data lands only inside the target's progress).
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tca_bench {

// A buffer both ranks register, in the same order: host memory, or a CUDA device's.
struct UcxBuffer {
  void* address = nullptr;
  size_t bytes = 0;
  bool gpu = false;
};

class UcxReference {
 public:
  UcxReference();
  UcxReference(const UcxReference&) = delete;
  UcxReference& operator=(const UcxReference&) = delete;
  ~UcxReference();

  // Collective over the job's two ranks (after tcaInit): a UCP context, a worker, an endpoint to
  // `peer`; registers `buffers` and a flag word and learns the peer's addresses and keys. Returns
  // why UCX cannot be used (the same on both ranks), or "" once ready. Decided once.
  std::string open(int peer, const std::vector<UcxBuffer>& buffers);
  // Puts `bytes` from the start of this rank's buffer `from` to the start of the peer's buffer
  // `to`, flushes, then raises the peer's flag. Failures end the job.
  void send(size_t from, size_t to, size_t bytes);
  // Returns once the peer's next message has raised this rank's flag.
  void wait_for_peer();

 private:
  struct State;
  std::string start(int peer, const std::vector<UcxBuffer>& buffers);
  std::unique_ptr<State> state_;
  bool decided_ = false;
  std::string failure_;
};

}  // namespace tca_bench
