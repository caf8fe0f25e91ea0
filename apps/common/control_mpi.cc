// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The control layer's MPI backend: the calls an MPI program makes, over MPI_COMM_WORLD.
#include "control_mpi.h"

#include <mpi.h>

#include <climits>
#include <string>

#include "tca_harness/check.h"

namespace tca_apps::mpi_backend {
namespace {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  tca_harness::die(std::string(call) + " failed: " + std::string(text, length));
}

int mpi_int(size_t value, const char* what) {
  if (value > static_cast<size_t>(INT_MAX))
    tca_harness::die(std::string("control exchange: ") + what + " " + std::to_string(value) +
                     " exceeds MPI's int");
  return static_cast<int>(value);
}

MPI_Datatype mpi_type(Type type) {
  switch (type) {
    case Type::kInt32:
      return MPI_INT32_T;
    case Type::kUint32:
      return MPI_UINT32_T;
    case Type::kInt64:
      return MPI_INT64_T;
    case Type::kUint64:
      return MPI_UINT64_T;
    case Type::kDouble:
      return MPI_DOUBLE;
    case Type::kUint8:
      return MPI_UINT8_T;
  }
  return MPI_BYTE;
}

MPI_Op mpi_op(Op op) {
  switch (op) {
    case Op::kSum:
      return MPI_SUM;
    case Op::kMax:
      return MPI_MAX;
    case Op::kMin:
      return MPI_MIN;
    case Op::kAnd:
      return MPI_LAND;
    case Op::kOr:
      return MPI_LOR;
    case Op::kBitOr:
      return MPI_BOR;
  }
  return MPI_SUM;
}

struct Host {
  int rank = 0;
  int size = 1;
};
Host host() {
  MPI_Comm comm;
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world, MPI_INFO_NULL, &comm),
            "MPI_Comm_split_type");
  Host h;
  MPI_Comm_rank(comm, &h.rank);
  MPI_Comm_size(comm, &h.size);
  MPI_Comm_free(&comm);
  return h;
}

}  // namespace

void start(int* argc, char*** argv, int* rank, int* size) {
  int provided = 0;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

void finish() { MPI_Finalize(); }
int local_rank() { return host().rank; }
int ranks_on_host() { return host().size; }
void barrier() { check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void broadcast(void* data, size_t bytes, int root) {
  check_mpi(MPI_Bcast(data, mpi_int(bytes, "bytes"), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

void allgather(const void* mine, void* all, size_t bytes) {
  const int count = mpi_int(bytes, "bytes");
  check_mpi(MPI_Allgather(mine, count, MPI_BYTE, all, count, MPI_BYTE, MPI_COMM_WORLD),
            "MPI_Allgather");
}

void allgather_in_place(void* all, size_t bytes) {
  const int count = mpi_int(bytes, "bytes");
  check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, count, MPI_BYTE, MPI_COMM_WORLD),
            "MPI_Allgather");
}

void allreduce(const void* in, void* out, size_t count, Type type, Op op) {
  check_mpi(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, mpi_int(count, "count"),
                          mpi_type(type), mpi_op(op), MPI_COMM_WORLD),
            "MPI_Allreduce");
}

void allgatherv(const void* mine, size_t bytes, void* all, const std::vector<uint64_t>& lengths,
                const std::vector<size_t>& displs) {
  std::vector<int> counts(lengths.size()), offsets(lengths.size());
  for (size_t r = 0; r < lengths.size(); ++r) {
    counts[r] = mpi_int(lengths[r], "bytes");
    offsets[r] = mpi_int(displs[r], "displacement");
  }
  check_mpi(MPI_Allgatherv(mine, mpi_int(bytes, "bytes"), MPI_BYTE, all, counts.data(),
                           offsets.data(), MPI_BYTE, MPI_COMM_WORLD),
            "MPI_Allgatherv");
}

void alltoallv(const void* send, const size_t* send_counts, const size_t* send_displs, void* recv,
               const size_t* recv_counts, const size_t* recv_displs, size_t elem_bytes) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Datatype element;
  check_mpi(MPI_Type_contiguous(mpi_int(elem_bytes, "element bytes"), MPI_BYTE, &element),
            "MPI_Type_contiguous");
  MPI_Type_commit(&element);
  std::vector<int> sc(ranks), sd(ranks), rc(ranks), rd(ranks);
  for (int r = 0; r < ranks; ++r) {
    sc[r] = mpi_int(send_counts[r], "count");
    sd[r] = mpi_int(send_displs[r], "displacement");
    rc[r] = mpi_int(recv_counts[r], "count");
    rd[r] = mpi_int(recv_displs[r], "displacement");
  }
  const int code = MPI_Alltoallv(send, sc.data(), sd.data(), element, recv, rc.data(), rd.data(),
                                 element, MPI_COMM_WORLD);
  MPI_Type_free(&element);
  check_mpi(code, "MPI_Alltoallv");
}

}  // namespace tca_apps::mpi_backend
