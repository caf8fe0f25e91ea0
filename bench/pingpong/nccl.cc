// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong's NCCL reference, ref.nccl_sendrecv. Built where the harness has NCCL's header
// (TCA_HARNESS_NCCL); the library is loaded at run time.
#include "tca_harness/nccl.h"

#include <cuda_runtime_api.h>

#include "pingpong.h"
#include "tca_harness/cuda_check.h"

namespace tca_pingpong {
namespace {

using tca_harness::check;

// Reference: NCCL send/recv, loaded at run time (libnccl.so.2 may be absent, or refuse two
// ranks on one GPU; then the row is skipped with a note). One communicator serves every size.
class NcclChannel final : public Channel {
 public:
  NcclChannel(const tca_harness::Nccl& nccl, const unsigned char* my_send, unsigned char* my_recv,
              size_t bytes, int peer)
      : nccl_(nccl), my_send_(my_send), my_recv_(my_recv), bytes_(bytes), peer_(peer) {}
  void send() override {
    nccl_.check(nccl_.send(my_send_, bytes_, ncclUint8, peer_, tca_harness::bench_stream()),
                "ncclSend");
    check(cudaStreamSynchronize(tca_harness::bench_stream()), "cudaStreamSynchronize");
  }
  void wait_for_peer() override {
    nccl_.check(nccl_.recv(my_recv_, bytes_, ncclUint8, peer_, tca_harness::bench_stream()),
                "ncclRecv");
    check(cudaStreamSynchronize(tca_harness::bench_stream()), "cudaStreamSynchronize");
  }

 private:
  const tca_harness::Nccl& nccl_;
  const unsigned char* my_send_;
  unsigned char* my_recv_;
  size_t bytes_;
  int peer_;
};
}  // namespace

void add_nccl_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  auto nccl = std::make_shared<tca_harness::Nccl>();
  paths->push_back({"ref.nccl_sendrecv", false, contiguous_layout,
                    [e, nccl] {  // collective: both ranks ask every path
                      return e->gpu ? nccl->open() : std::string("no GPU on both ranks");
                    },
                    [e, nccl](const Layout& layout) -> std::unique_ptr<Channel> {
                      return std::make_unique<NcclChannel>(*nccl, e->gpu_send, e->gpu_recv,
                                                           layout.bytes(), e->peer);
                    },
                    TCA_MEM_GPU, TCA_MEM_GPU});
}

}  // namespace tca_pingpong
