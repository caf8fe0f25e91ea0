// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) the tca authors
// The control layer's backend choice and its tca backend; control_mpi.cc holds the MPI backend.
#include "control.h"

#include <tca/tca.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "control_mpi.h"
#include "tca_harness/check.h"
#include "tca_harness/launch.h"

namespace tca_apps {
namespace {

struct State {
  bool started = false;
  Backend backend = Backend::kTca;
  std::string mpi_missing = "this build of the applications has no MPI";
  int rank = 0;
  int size = 1;
};
State& state() {
  static State s;
  return s;
}

bool use_mpi() { return state().backend == Backend::kMpi; }

void check(tcaResult result, const char* call) { tca_harness::check(result, call); }

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return (*end == '\0' && value >= 0 && value <= (1 << 30)) ? static_cast<int>(value) : fallback;
}

// K of TCA_HOST_ID=block:K, else 0.
int hosts_per() {
  const char* text = std::getenv("TCA_HOST_ID");
  if (text == nullptr || std::strncmp(text, "block:", 6) != 0) return 0;
  return std::max(0, std::atoi(text + 6));
}

size_t type_bytes(Type type) {
  switch (type) {
    case Type::kInt32:
    case Type::kUint32:
      return 4;
    case Type::kUint8:
      return 1;
    default:
      return 8;
  }
}

template <typename T>
T combine(T a, T b, Op op) {
  switch (op) {
    case Op::kSum:
      return static_cast<T>(a + b);
    case Op::kMax:
      return std::max(a, b);
    case Op::kMin:
      return std::min(a, b);
    case Op::kAnd:
      return static_cast<T>((a != T{}) && (b != T{}));
    case Op::kOr:
      return static_cast<T>((a != T{}) || (b != T{}));
    case Op::kBitOr:
      if constexpr (std::is_integral_v<T>) return static_cast<T>(a | b);
      tca_harness::die("control allreduce: a bitwise or of floating-point values");
  }
  return a;
}

// out[i] = rank 0's [i] op rank 1's [i] op ...: the same order, so the same bits, everywhere.
template <typename T>
void reduce_in_rank_order(const std::vector<uint8_t>& all, size_t count, int ranks, Op op,
                          void* out) {
  std::vector<T> result(count);
  std::memcpy(result.data(), all.data(), count * sizeof(T));
  for (int r = 1; r < ranks; ++r) {
    const uint8_t* theirs = all.data() + static_cast<size_t>(r) * count * sizeof(T);
    for (size_t i = 0; i < count; ++i) {
      T value;
      std::memcpy(&value, theirs + i * sizeof(T), sizeof(T));
      result[i] = combine(result[i], value, op);
    }
  }
  std::memcpy(out, result.data(), count * sizeof(T));
}

}  // namespace

std::string start_control(int* argc, char*** argv) {
  State& s = state();
#ifdef TCA_HARNESS_MPI
  s.mpi_missing = tca_harness::mpi_launch_missing();
  if (s.mpi_missing.empty()) {
    s.backend = Backend::kMpi;
    mpi_backend::start(argc, argv, &s.rank, &s.size);
    s.started = true;
    return "";
  }
#else
  (void)argc;
  (void)argv;
#endif
  s.backend = Backend::kTca;
  const tcaResult result = tcaInit();
  if (result != TCA_SUCCESS) return std::string("tcaInit failed: ") + tcaGetErrorString(result);
  check(tcaRank(&s.rank), "tcaRank");
  check(tcaSize(&s.size), "tcaSize");
  s.started = true;
  return "";
}

void finish_control() {
  State& s = state();
  if (!s.started) return;
  s.started = false;
  if (use_mpi()) {
    mpi_backend::finish();
    return;
  }
  check(tcaFinalize(), "tcaFinalize");
}

Backend control_backend() { return state().backend; }
std::string mpi_unavailable() {
  return use_mpi() ? "" : "no MPI: " + state().mpi_missing + " (start with mpirun for MPI)";
}
bool tca_started_by_control() { return state().started && !use_mpi(); }
int rank() { return state().rank; }
int size() { return state().size; }

int local_rank() {
  if (use_mpi()) return mpi_backend::local_rank();
  if (const int local = env_int("LOCAL_RANK", -1); local >= 0) return local;
  const int per = hosts_per();
  const int r = env_int("TCA_RANK", state().rank);
  return per > 0 ? r % per : r;
}

int ranks_on_host() {
  if (use_mpi()) return mpi_backend::ranks_on_host();
  if (const int local = env_int("LOCAL_WORLD_SIZE", -1); local > 0) return local;
  const int total = env_int("TCA_SIZE", state().size);
  const int per = hosts_per();
  if (per <= 0) return std::max(1, total);
  const int r = env_int("TCA_RANK", state().rank);
  const int first = r / per * per;
  return std::max(1, std::min(total, first + per) - first);
}

void barrier() {
  if (use_mpi()) return mpi_backend::barrier();
  check(tcaBarrier(), "tcaBarrier");
}

void broadcast(void* data, size_t bytes, int root) {
  if (use_mpi()) return mpi_backend::broadcast(data, bytes, root);
  if (bytes > 0) check(tcaBootstrapBroadcast(data, bytes, root), "tcaBootstrapBroadcast");
}

void allgather(const void* mine, void* all, size_t bytes) {
  if (use_mpi()) return mpi_backend::allgather(mine, all, bytes);
  if (bytes > 0) check(tcaBootstrapAllgather(mine, all, bytes), "tcaBootstrapAllgather");
}

void allgather_in_place(void* all, size_t bytes) {
  if (use_mpi()) return mpi_backend::allgather_in_place(all, bytes);
  auto* bytes_all = static_cast<uint8_t*>(all);
  const std::vector<uint8_t> mine(bytes_all + static_cast<size_t>(rank()) * bytes,
                                  bytes_all + static_cast<size_t>(rank() + 1) * bytes);
  allgather(mine.data(), all, bytes);
}

void allreduce(const void* in, void* out, size_t count, Type type, Op op) {
  if (use_mpi()) return mpi_backend::allreduce(in, out, count, type, op);
  if (count == 0) return;
  const size_t bytes = count * type_bytes(type);
  std::vector<uint8_t> all(bytes * static_cast<size_t>(size()));
  allgather(in, all.data(), bytes);
  switch (type) {
    case Type::kInt32:
      return reduce_in_rank_order<int32_t>(all, count, size(), op, out);
    case Type::kUint32:
      return reduce_in_rank_order<uint32_t>(all, count, size(), op, out);
    case Type::kInt64:
      return reduce_in_rank_order<int64_t>(all, count, size(), op, out);
    case Type::kUint64:
      return reduce_in_rank_order<uint64_t>(all, count, size(), op, out);
    case Type::kDouble:
      return reduce_in_rank_order<double>(all, count, size(), op, out);
    case Type::kUint8:
      return reduce_in_rank_order<uint8_t>(all, count, size(), op, out);
  }
}

void allgatherv(const void* mine, size_t bytes, std::vector<uint8_t>* all,
                std::vector<size_t>* counts) {
  const std::vector<uint64_t> lengths = allgather_value<uint64_t>(bytes);
  std::vector<size_t> displs(lengths.size() + 1, 0);
  for (size_t r = 0; r < lengths.size(); ++r) displs[r + 1] = displs[r] + lengths[r];
  all->assign(displs.back(), 0);
  if (counts != nullptr) counts->assign(lengths.begin(), lengths.end());
  if (use_mpi()) return mpi_backend::allgatherv(mine, bytes, all->data(), lengths, displs);
  const uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
  if (longest == 0) return;
  std::vector<uint8_t> padded(longest), gathered(longest * lengths.size());
  if (bytes > 0) std::memcpy(padded.data(), mine, bytes);
  allgather(padded.data(), gathered.data(), longest);
  for (size_t r = 0; r < lengths.size(); ++r) {
    if (lengths[r] > 0)
      std::memcpy(all->data() + displs[r], gathered.data() + r * longest, lengths[r]);
  }
}

tca_harness::Control harness_control() {
  tca_harness::Control control;
  control.rank = rank();
  control.size = size();
  control.allgather = [](const void* mine, void* all, size_t bytes) {
    allgather(mine, all, bytes);
  };
  control.broadcast = [](void* data, size_t bytes, int root) { broadcast(data, bytes, root); };
  return control;
}

void alltoallv(const void* send, const size_t* send_counts, const size_t* send_displs, void* recv,
               const size_t* recv_counts, const size_t* recv_displs, size_t elem_bytes) {
  if (use_mpi())
    return mpi_backend::alltoallv(send, send_counts, send_displs, recv, recv_counts, recv_displs,
                                  elem_bytes);
  // Round k: rank r's block for rank (r + k) % P, padded to the round's longest, gathered by all.
  const int ranks = size();
  const int me = rank();
  std::vector<uint64_t> mine(send_counts, send_counts + ranks);
  std::vector<uint64_t> counts(static_cast<size_t>(ranks) * ranks);
  allgather(mine.data(), counts.data(), sizeof(uint64_t) * ranks);
  const auto* from = static_cast<const uint8_t*>(send);
  auto* to = static_cast<uint8_t*>(recv);
  // Empty blocks may come with null buffers: memcpy only what exists.
  if (send_counts[me] > 0)
    std::memcpy(to + recv_displs[me] * elem_bytes, from + send_displs[me] * elem_bytes,
                send_counts[me] * elem_bytes);
  std::vector<uint8_t> block, gathered;
  for (int k = 1; k < ranks; ++k) {
    uint64_t longest = 0;
    for (int r = 0; r < ranks; ++r)
      longest =
          std::max<uint64_t>(longest, counts[static_cast<size_t>(r) * ranks + (r + k) % ranks]);
    if (longest == 0) continue;
    const size_t block_bytes = longest * elem_bytes;
    const int dest = (me + k) % ranks;
    const int source = (me - k + ranks) % ranks;
    block.assign(block_bytes, 0);
    if (send_counts[dest] > 0)
      std::memcpy(block.data(), from + send_displs[dest] * elem_bytes,
                  send_counts[dest] * elem_bytes);
    gathered.resize(block_bytes * ranks);
    allgather(block.data(), gathered.data(), block_bytes);
    if (recv_counts[source] > 0)
      std::memcpy(to + recv_displs[source] * elem_bytes,
                  gathered.data() + static_cast<size_t>(source) * block_bytes,
                  recv_counts[source] * elem_bytes);
  }
}

}  // namespace tca_apps
