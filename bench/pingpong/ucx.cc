// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong's UCX reference, ref.ucx_put: UCX's own put + flush, then a flag put
// (ucx_reference.h). Built where tca has UCX.
#include "pingpong.h"
#include "ucx_reference.h"

namespace tca_pingpong {
namespace {

// Reference: UCX's own put + flush, then a flag put (bench/ucx_reference.h).
class UcxPutChannel final : public Channel {
 public:
  UcxPutChannel(tca_bench::UcxReference& ucx, size_t from, size_t to, size_t bytes)
      : ucx_(ucx), from_(from), to_(to), bytes_(bytes) {}
  void send() override { ucx_.send(from_, to_, bytes_); }
  void wait_for_peer() override { ucx_.wait_for_peer(); }

 private:
  tca_bench::UcxReference& ucx_;
  size_t from_;
  size_t to_;
  size_t bytes_;
};

}  // namespace

// ref.ucx_put for cpu>cpu and, where both ranks have a GPU, gpu>gpu, cpu>gpu and gpu>cpu. The
// buffers are the chains' own: 0 and 1 the host send and receive buffers, 2 and 3 the GPU's.
void add_ucx_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  auto ucx = std::make_shared<tca_bench::UcxReference>();
  const auto index = [](tcaMemKind kind, bool receive) -> size_t {
    return (kind == TCA_MEM_GPU ? 2 : 0) + (receive ? 1 : 0);
  };
  for (const auto& [src, dst] : kNetworkMemoryPairs) {
    const bool needs_gpu = src == TCA_MEM_GPU || dst == TCA_MEM_GPU;
    paths->push_back({"ref.ucx_put", false, contiguous_layout,
                      [e, ucx, needs_gpu] {  // collective: both ranks ask every path
                        if (needs_gpu && !e->gpu) return std::string("no GPU on both ranks");
                        std::vector<tca_bench::UcxBuffer> buffers = {
                            {e->send, e->buffer_bytes, false}, {e->recv, e->buffer_bytes, false}};
                        if (e->gpu) {
                          buffers.push_back({e->gpu_send, e->buffer_bytes, true});
                          buffers.push_back({e->gpu_recv, e->buffer_bytes, true});
                        }
                        return ucx->open(e->peer, buffers);
                      },
                      [ucx, from = index(src, false),
                       to = index(dst, true)](const Layout& layout) -> std::unique_ptr<Channel> {
                        return std::make_unique<UcxPutChannel>(*ucx, from, to, layout.bytes());
                      },
                      src, dst});
  }
}

}  // namespace tca_pingpong
