// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// tca-pingpong's MPI reference, ref.mpi_sendrecv: two-sided MPI with the same buffers. Built in
// where tca has MPI (TCA_BENCH_MPI); it runs where an MPI launcher started the job, and is
// skipped with the reason (Endpoint::mpi_missing) elsewhere.
#ifdef TCA_BENCH_MPI
#include <mpi.h>
#endif

#include "pingpong.h"
#include "tca_harness/check.h"

namespace tca_pingpong {
namespace {

#ifdef TCA_BENCH_MPI
MPI_Comm g_comm = MPI_COMM_NULL;  // ref.mpi_sendrecv's own traffic, where MPI runs

constexpr int kTag = 7;  // tag of the MPI reference messages

// Reference: two-sided MPI with the same buffers.
class MpiSendRecvChannel final : public Channel {
 public:
  MpiSendRecvChannel(unsigned char* my_send, unsigned char* my_recv, size_t bytes, int peer,
                     MPI_Comm comm)
      : my_send_(my_send),
        my_recv_(my_recv),
        count_(static_cast<int>(bytes)),
        peer_(peer),
        comm_(comm) {}

  void send() override { MPI_Send(my_send_, count_, MPI_BYTE, peer_, kTag, comm_); }
  void wait_for_peer() override {
    MPI_Recv(my_recv_, count_, MPI_BYTE, peer_, kTag, comm_, MPI_STATUS_IGNORE);
  }

 private:
  unsigned char* my_send_;
  unsigned char* my_recv_;
  int count_;
  int peer_;
  MPI_Comm comm_;
};
#endif  // TCA_BENCH_MPI

}  // namespace

void start_mpi_reference(Endpoint& endpoint) {
#ifdef TCA_BENCH_MPI
  if (endpoint.mpi_missing.empty()) MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
#else
  (void)endpoint;
#endif
}

void finish_mpi_reference() {
#ifdef TCA_BENCH_MPI
  if (g_comm != MPI_COMM_NULL) MPI_Comm_free(&g_comm);
#endif
}

void add_mpi_paths(Endpoint& endpoint, std::vector<Path>* paths) {
  const Endpoint* e = &endpoint;
  paths->push_back({"ref.mpi_sendrecv", false, contiguous_layout, [e] { return e->mpi_missing; },
                    [e](const Layout& layout) -> std::unique_ptr<Channel> {
#ifdef TCA_BENCH_MPI
                      return std::make_unique<MpiSendRecvChannel>(e->send, e->recv, layout.bytes(),
                                                                  e->peer, g_comm);
#else
                      (void)e;
                      (void)layout;
                      tca_harness::die("ref.mpi_sendrecv needs MPI");  // mpi_missing says why
#endif
                    }});
}

}  // namespace tca_pingpong
